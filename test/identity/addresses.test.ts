/** Address parsing, allow-list matching and client-address resolution (spec: Authentication, item 5). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clientAddress, compileAddressList, parseAddress, parseRange } from '../../core/identity/addresses.ts';

interface Case {
  name: string;
  list: string[];
  client: string;
  allowed: boolean;
}

const MALFORMED_ONLY = ['10.0.0/8', '300.1.1.1', '10.0.0.0/33', '::/129', '10.0.0.0/-1', '10.0.0.0/abc', '', 'garbage'];

const CASES: Case[] = [
  // single addresses
  { name: 'single v4, same address', list: ['10.0.0.1'], client: '10.0.0.1', allowed: true },
  { name: 'single v4, neighbour', list: ['10.0.0.1'], client: '10.0.0.2', allowed: false },
  { name: 'single v6, same text', list: ['2001:db8::1'], client: '2001:db8::1', allowed: true },
  { name: 'single v6, expanded entry vs compressed client', list: ['2001:0db8:0000:0000:0000:0000:0000:0001'], client: '2001:db8::1', allowed: true },
  { name: 'single v6, compressed entry vs expanded client', list: ['2001:db8::1'], client: '2001:db8:0:0:0:0:0:1', allowed: true },
  { name: 'single v6, upper-case entry', list: ['2001:DB8::A'], client: '2001:db8::a', allowed: true },
  { name: 'single v6, neighbour', list: ['2001:db8::1'], client: '2001:db8::2', allowed: false },
  // IPv4 CIDR edges
  { name: 'v4 /24, first address', list: ['192.168.1.0/24'], client: '192.168.1.0', allowed: true },
  { name: 'v4 /24, last address', list: ['192.168.1.0/24'], client: '192.168.1.255', allowed: true },
  { name: 'v4 /24, one below', list: ['192.168.1.0/24'], client: '192.168.0.255', allowed: false },
  { name: 'v4 /24, one above', list: ['192.168.1.0/24'], client: '192.168.2.0', allowed: false },
  { name: 'v4 /0 holds every IPv4 address', list: ['0.0.0.0/0'], client: '203.0.113.9', allowed: true },
  { name: 'v4 /32, the address', list: ['203.0.113.9/32'], client: '203.0.113.9', allowed: true },
  { name: 'v4 /32, the next address', list: ['203.0.113.9/32'], client: '203.0.113.10', allowed: false },
  { name: 'v4 CIDR with host bits set means its network', list: ['10.1.2.3/8'], client: '10.200.0.1', allowed: true },
  // IPv6 CIDR edges
  { name: 'v6 /128, the address', list: ['2001:db8::1/128'], client: '2001:db8::1', allowed: true },
  { name: 'v6 /128, the next address', list: ['2001:db8::1/128'], client: '2001:db8::2', allowed: false },
  { name: 'v6 /64, first address', list: ['2001:db8:0:1::/64'], client: '2001:db8:0:1::', allowed: true },
  { name: 'v6 /64, last address', list: ['2001:db8:0:1::/64'], client: '2001:db8:0:1:ffff:ffff:ffff:ffff', allowed: true },
  { name: 'v6 /64, one below', list: ['2001:db8:0:1::/64'], client: '2001:db8:0:0:ffff:ffff:ffff:ffff', allowed: false },
  { name: 'v6 /64, one above', list: ['2001:db8:0:1::/64'], client: '2001:db8:0:2::', allowed: false },
  { name: 'v6 /0 holds every IPv6 address', list: ['::/0'], client: '2001:db8::1', allowed: true },
  // malformed entries match nothing
  { name: 'CIDR with too few octets', list: ['10.0.0/8'], client: '10.0.0.1', allowed: false },
  { name: 'octet above 255', list: ['10.0.0.256'], client: '10.0.0.0', allowed: false },
  { name: 'octet above 255 in a CIDR', list: ['256.0.0.0/8'], client: '0.0.0.1', allowed: false },
  { name: 'v4 prefix /33', list: ['10.0.0.0/33'], client: '10.0.0.0', allowed: false },
  { name: 'v6 prefix /129', list: ['2001:db8::/129'], client: '2001:db8::', allowed: false },
  { name: 'negative prefix', list: ['10.0.0.0/-1'], client: '10.0.0.0', allowed: false },
  { name: 'non-numeric prefix', list: ['10.0.0.0/abc'], client: '10.0.0.0', allowed: false },
  { name: 'empty prefix', list: ['10.0.0.0/'], client: '10.0.0.0', allowed: false },
  { name: 'zero-padded prefix', list: ['10.0.0.0/08'], client: '10.0.0.1', allowed: false },
  { name: 'empty entry', list: [''], client: '10.0.0.1', allowed: false },
  { name: 'garbage entry', list: ['not-an-address'], client: '10.0.0.1', allowed: false },
  { name: 'shorthand IPv4 is not read leniently', list: ['10.1'], client: '10.0.0.1', allowed: false },
  { name: 'octal-looking IPv4 is not read as octal', list: ['010.0.0.1'], client: '8.0.0.1', allowed: false },
  { name: 'octal-looking IPv4 is not read as decimal either', list: ['010.0.0.1'], client: '10.0.0.1', allowed: false },
  { name: 'hex IPv4 is malformed', list: ['0x0a.0.0.1'], client: '10.0.0.1', allowed: false },
  { name: 'whitespace around an entry is malformed', list: [' 10.0.0.1'], client: '10.0.0.1', allowed: false },
  { name: 'a malformed entry does not disable a valid one', list: ['10.0.0/8', '192.168.1.0/24'], client: '192.168.1.7', allowed: true },
  { name: 'beside a valid entry, the malformed one still matches nothing', list: ['10.0.0/8', '192.168.1.0/24'], client: '10.0.0.1', allowed: false },
  // families
  { name: 'v4 client vs ::/0', list: ['::/0'], client: '10.0.0.1', allowed: false },
  { name: 'v6 client vs 0.0.0.0/0', list: ['0.0.0.0/0'], client: '2001:db8::1', allowed: false },
  { name: 'mapped client vs a v4 range', list: ['10.0.0.0/8'], client: '::ffff:10.0.0.1', allowed: true },
  { name: 'mapped client vs a single v4 entry', list: ['10.0.0.1'], client: '::ffff:10.0.0.1', allowed: true },
  { name: 'mapped client vs an unrelated v6 range', list: ['2001:db8::/32'], client: '::ffff:10.0.0.1', allowed: false },
  { name: 'mapped client is IPv4, so ::/0 does not hold it', list: ['::/0'], client: '::ffff:10.0.0.1', allowed: false },
  { name: 'mapped entry vs its v4 host', list: ['::ffff:10.0.0.1'], client: '10.0.0.1', allowed: true },
  { name: 'mapped CIDR entry (/104) is the v4 /8', list: ['::ffff:10.0.0.0/104'], client: '10.9.9.9', allowed: true },
  { name: 'IPv4-compatible ::a.b.c.d is IPv6, not mapped', list: ['10.0.0.0/8'], client: '::10.0.0.1', allowed: false },
  // clients
  { name: 'a zone id on the client is dropped', list: ['fe80::/10'], client: 'fe80::1%eth0', allowed: true },
  { name: 'a malformed client matches nothing', list: ['0.0.0.0/0', '::/0'], client: 'bogus', allowed: false },
  { name: 'an empty client matches nothing', list: ['0.0.0.0/0', '::/0'], client: '', allowed: false },
  { name: 'an empty list matches nothing (the plugin reads empty as unrestricted)', list: [], client: '10.0.0.1', allowed: false },
];

describe('compileAddressList', () => {
  test('the matrix holds at least 24 cases', () => {
    assert.ok(CASES.length >= 24, String(CASES.length));
  });

  for (const c of CASES) {
    test(`${c.name}: ${JSON.stringify(c.list)} ${c.allowed ? 'allows' : 'refuses'} ${JSON.stringify(c.client)}`, () => {
      assert.equal(compileAddressList(c.list)(c.client), c.allowed);
    });
  }

  test('a list of only malformed entries refuses every address', () => {
    const matches = compileAddressList(MALFORMED_ONLY);
    for (const client of ['10.0.0.1', '10.0.0.0', '0.0.0.0', '255.255.255.255', '300.1.1.1', '::', '::1', '2001:db8::1', '::ffff:10.0.0.1', 'garbage', '']) {
      assert.equal(matches(client), false, client);
    }
  });

  test('each malformed form is refused by parseRange', () => {
    for (const entry of MALFORMED_ONLY) assert.equal(parseRange(entry), null, entry);
  });
});

describe('parseAddress', () => {
  test('strict IPv4: four decimal octets only', () => {
    assert.equal(parseAddress('192.0.2.1')?.toString(), '192.0.2.1');
    for (const text of ['10.1', '10.0.1', '4294967295', '010.0.0.1', '0x0a.0.0.1', '10.0.0.256', '1.2.3.4.5', ' 1.2.3.4', '1.2.3.4%eth0']) {
      assert.equal(parseAddress(text), null, text);
    }
  });

  test('IPv6 in its textual forms, and the embedded IPv4 part as strict as IPv4', () => {
    assert.equal(parseAddress('2001:0DB8:0:0::1')?.toString(), '2001:db8::1');
    assert.equal(parseAddress('::')?.toString(), '::');
    for (const text of ['1::2::3', '12345::', '1:2:3:4:5:6:7:8:9', '::ffff:01.2.3.4', '::ffff:1.2.3', 'fe80::1%', ':::1']) {
      assert.equal(parseAddress(text), null, text);
    }
  });

  test('a mapped address is its IPv4 host; the IPv4-compatible form is not mapped', () => {
    const mapped = parseAddress('::ffff:192.0.2.1');
    assert.equal(mapped?.kind(), 'ipv4');
    assert.equal(mapped?.toString(), '192.0.2.1');
    assert.equal(parseAddress('::ffff:c000:201')?.toString(), '192.0.2.1');
    assert.equal(parseAddress('::192.0.2.1')?.kind(), 'ipv6');
  });

  test('a zone id is dropped', () => {
    assert.equal(parseAddress('fe80::1%eth0')?.toString(), 'fe80::1');
    assert.equal(parseAddress('fe80::1%en0.1')?.toString(), 'fe80::1');
  });
});

describe('clientAddress', () => {
  const trusted = compileAddressList(['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']);
  const on = { trustProxy: true, isTrustedProxy: trusted };
  const off = { trustProxy: false, isTrustedProxy: trusted };

  test('trustProxy off: X-Forwarded-For is ignored', () => {
    assert.equal(clientAddress('127.0.0.1', '10.1.2.3', off), '127.0.0.1');
    assert.equal(clientAddress('203.0.113.5', '10.1.2.3', off), '203.0.113.5');
  });

  test('trustProxy off: a mapped peer is normalized to IPv4', () => {
    assert.equal(clientAddress('::ffff:127.0.0.1', undefined, off), '127.0.0.1');
    assert.equal(clientAddress('::ffff:203.0.113.5', '10.1.2.3', off), '203.0.113.5');
  });

  test('trusted peer: the rightmost untrusted hop wins over a spoofed leftmost', () => {
    assert.equal(clientAddress('127.0.0.1', '6.6.6.6, 203.0.113.7', on), '203.0.113.7');
  });

  test('several trusted hops are skipped', () => {
    assert.equal(clientAddress('10.0.0.4', '6.6.6.6, 203.0.113.7, 192.168.0.9, 10.0.0.3', on), '203.0.113.7');
  });

  test('an untrusted peer: X-Forwarded-For is ignored', () => {
    assert.equal(clientAddress('198.51.100.1', '10.0.0.1', on), '198.51.100.1');
  });

  test('every hop trusted: the leftmost', () => {
    assert.equal(clientAddress('127.0.0.1', '10.0.0.1, 10.0.0.2', on), '10.0.0.1');
  });

  test('a malformed hop is untrusted and returned as written', () => {
    assert.equal(clientAddress('127.0.0.1', '203.0.113.7, bogus, 10.0.0.2', on), 'bogus');
    assert.equal(clientAddress('127.0.0.1', '1.2.3.4:5678', on), '1.2.3.4:5678');
    assert.equal(clientAddress('127.0.0.1', '203.0.113.7, , 10.0.0.2', on), '');
  });

  test('several headers joined, whitespace around entries, mapped and IPv6 hops', () => {
    assert.equal(clientAddress('::ffff:127.0.0.1', '  203.0.113.7 ,10.0.0.2  ,  ::ffff:10.0.0.3', on), '203.0.113.7');
    assert.equal(clientAddress('::1', '::ffff:203.0.113.7', on), '203.0.113.7');
    assert.equal(clientAddress('::1', '2001:db8::7, fd00::1', on), '2001:db8::7');
  });

  test('no or empty X-Forwarded-For: the peer', () => {
    assert.equal(clientAddress('127.0.0.1', undefined, on), '127.0.0.1');
    assert.equal(clientAddress('127.0.0.1', '  ', on), '127.0.0.1');
  });

  test('an unknown peer stays as it is', () => {
    assert.equal(clientAddress('', '10.0.0.1', on), '');
  });
});
