/** The outbound URL guard: what a caller-chosen URL may reach, checked at submit and again at delivery. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { outboundFetch, ResolveError, type ResolveAll } from '../../core/outbound/fetch.ts';
import { allowListEntryKind, checkUrl, compileOutboundPolicy, OutboundRefusedError } from '../../core/outbound/policy.ts';
import { isForbiddenAddress } from '../../core/outbound/ranges.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const strict = compileOutboundPolicy({ allowHttp: false, allowedAddresses: [] });
const httpOnly = compileOutboundPolicy({ allowHttp: true, allowedAddresses: [] });
const loopbackAllowed = compileOutboundPolicy({ allowHttp: true, allowedAddresses: ['127.0.0.1'] });

const FORBIDDEN = [
  '0.0.0.0', '0.1.2.3', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.127.255.255', '127.0.0.1', '127.255.255.254',
  '169.254.0.1', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.168.0.1', '198.18.0.1',
  '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
  '::', '::1', '::7f00:1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'febf:ffff::1', 'fec0::1', 'ff02::1',
  // IPv4-mapped, NAT64 and 6to4 forms of forbidden IPv4 hosts
  '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '64:ff9b::127.0.0.1',
  '2002:c0a8:101::1', '2002:7f00:1::',
];
const PUBLIC = [
  '8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '169.253.255.255',
  '223.255.255.255', '2606:4700:4700::1111', '2001:db8::1', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1',
];

describe('the forbidden ranges', () => {
  for (const address of FORBIDDEN) test(`refuses ${address}`, () => assert.equal(isForbiddenAddress(address), true));
  for (const address of PUBLIC) test(`allows ${address}`, () => assert.equal(isForbiddenAddress(address), false));
  test('text that is not an address is never taken for a public one', () => {
    for (const text of ['', 'localhost', '010.0.0.1', '127.1', '10.0.0.256']) assert.equal(isForbiddenAddress(text), true, text);
  });
});

describe('checkUrl at submit time', () => {
  const refused = (url: string, policy = strict) => {
    assert.throws(() => checkUrl(url, policy), OutboundRefusedError, url);
    return (() => { try { checkUrl(url, policy); } catch (err) { return (err as OutboundRefusedError).reason; } return ''; })();
  };

  test('accepts a public https URL and a host name (resolved at delivery)', () => {
    assert.equal(checkUrl('https://hooks.example.com/batch?token=1', strict).host, 'hooks.example.com');
    assert.equal(checkUrl('https://203.0.113.7:8443/x', strict).hostname, '203.0.113.7');
  });

  test('refuses http unless allowHttp, and any other scheme always', () => {
    assert.equal(refused('http://hooks.example.com/'), 'the scheme must be https');
    assert.equal(checkUrl('http://hooks.example.com/', httpOnly).protocol, 'http:');
    for (const url of ['ftp://hooks.example.com/', 'file:///etc/passwd', 'gopher://x/', 'javascript:alert(1)']) refused(url, httpOnly);
  });

  test('refuses credentials in the URL, without repeating them', () => {
    for (const url of ['https://user:pass@hooks.example.com/', 'https://user@hooks.example.com/', 'https://:pass@hooks.example.com/']) {
      const reason = refused(url);
      assert.equal(reason, 'the URL must not carry a user name or password');
    }
  });

  test('refuses what is not an absolute URL', () => {
    for (const url of ['', 'hooks.example.com/x', '/v1/hook', 'https://', 'https://[::1/']) refused(url);
  });

  test('refuses IP-literal hosts in forbidden ranges, however they are written', () => {
    for (const url of [
      'https://10.0.0.1/', 'https://127.0.0.1/', 'https://169.254.169.254/latest/meta-data', 'https://0.0.0.0/',
      'https://0x7f.1/', 'https://2130706433/', 'https://017700000001/', 'https://127.1/',
      'https://[::1]/', 'https://[::ffff:127.0.0.1]/', 'https://[::ffff:a9fe:a9fe]/', 'https://[fe80::1]/', 'https://[fd00::1]/',
      'https://[64:ff9b::7f00:1]/', 'https://100.100.100.200/',
    ]) assert.match(refused(url), /is private, loopback, link-local or otherwise not public$/, url);
  });

  test('an allow-listed address or range passes', () => {
    assert.equal(checkUrl('http://127.0.0.1:9/x', loopbackAllowed).hostname, '127.0.0.1');
    const ranges = compileOutboundPolicy({ allowHttp: false, allowedAddresses: ['10.0.0.0/8', 'fd00::/8'] });
    checkUrl('https://10.20.30.40/', ranges);
    checkUrl('https://[fd00::5]/', ranges);
    refused('https://192.168.0.1/', ranges);
  });
});

describe('allow-list entries', () => {
  test('are addresses, ranges or host names; anything else is refused at boot', () => {
    assert.equal(allowListEntryKind('127.0.0.1'), 'range');
    assert.equal(allowListEntryKind('10.0.0.0/8'), 'range');
    assert.equal(allowListEntryKind('::1'), 'range');
    assert.equal(allowListEntryKind('hooks.internal.example'), 'host');
    assert.equal(allowListEntryKind('localhost'), 'host');
    for (const bad of ['10.0.0.256', '010.0.0.1', '10.0.0/8', '::1/129', 'hooks_internal', 'a..b', '-x.example', ' 10.0.0.1', '']) {
      assert.equal(allowListEntryKind(bad), null, bad);
    }
  });
});

describe('outboundFetch at delivery time', () => {
  let receiver: Receiver;
  let target: Receiver;
  before(async () => {
    target = await startReceiver(() => 200);
    receiver = await startReceiver(() => (res) => res.writeHead(302, { location: target.url }).end());
  });
  after(async () => {
    await receiver.close();
    await target.close();
  });
  const post = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs: 2000 };
  const resolving = (addresses: string[]): ResolveAll & { calls: string[] } => {
    const calls: string[] = [];
    return Object.assign(async (host: string) => {
      calls.push(host);
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
    }, { calls });
  };

  test('a host name resolving to loopback is refused and nothing is sent', async () => {
    const before = target.received.length;
    const resolve = resolving(['127.0.0.1']);
    await assert.rejects(outboundFetch(`http://hooks.example.test:${target.port}/x`, post, httpOnly, resolve),
      (err: OutboundRefusedError) => err instanceof OutboundRefusedError && /resolves to 127\.0\.0\.1/.test(err.reason));
    assert.deepEqual(resolve.calls, ['hooks.example.test']);
    assert.equal(target.received.length, before);
  });

  test('one forbidden address among the answers refuses the host', async () => {
    await assert.rejects(outboundFetch('https://hooks.example.test/x', post, strict, resolving(['93.184.215.14', '::ffff:10.1.2.3'])),
      (err: OutboundRefusedError) => /resolves to ::ffff:10\.1\.2\.3/.test(err.reason));
  });

  test('an IP literal in a forbidden range is refused before any connection', async () => {
    const before = target.received.length;
    await assert.rejects(outboundFetch(target.url, post, httpOnly), OutboundRefusedError);
    assert.equal(target.received.length, before);
  });

  test('loopback is reached when allow-listed', async () => {
    const before = target.received.length;
    const response = await outboundFetch(target.url, post, loopbackAllowed);
    assert.equal(response.status, 200);
    assert.equal(target.received.length, before + 1);
  });

  test('an allow-listed host name may resolve to loopback', async () => {
    const policy = compileOutboundPolicy({ allowHttp: true, allowedAddresses: ['Hooks.Internal.Test'] });
    const response = await outboundFetch(`http://hooks.internal.test:${target.port}/x`, post, policy, resolving(['127.0.0.1']));
    assert.equal(response.status, 200);
  });

  test('the connection goes to the checked address: the name is resolved once, by the guard', async () => {
    const before = target.received.length;
    let calls = 0;
    // A rebinding resolver: the first answer passes the check, any later one would point elsewhere.
    const rebinding: ResolveAll = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.255.255.1', family: 4 }];
    const response = await outboundFetch(`http://rebind.example.test:${target.port}/x`, post, loopbackAllowed, rebinding);
    assert.equal(response.status, 200);
    assert.equal(response.address, '127.0.0.1');
    assert.equal(calls, 1);
    assert.equal(target.received.length, before + 1);
    assert.equal(target.received.at(-1)!.headers.host, `rebind.example.test:${target.port}`);
  });

  test('a redirect is an answer: it is not followed', async () => {
    const hits = target.received.length;
    const response = await outboundFetch(receiver.url, post, loopbackAllowed);
    assert.equal(response.status, 302);
    assert.equal(target.received.length, hits, 'the redirect target was never called');
  });

  test('an endless answer is read up to the cap and dropped, not waited for', async () => {
    let timer: NodeJS.Timeout | undefined;
    const endless = await startReceiver(() => (res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      timer = setInterval(() => res.write(Buffer.alloc(16 * 1024, 1)), 5);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const started = Date.now();
      const response = await outboundFetch(endless.url, { ...post, timeoutMs: 5000, maxResponseBytes: 64 * 1024 }, loopbackAllowed);
      assert.equal(response.status, 200);
      assert.ok(Date.now() - started < 2000, `returned after ${Date.now() - started} ms`);
    } finally {
      clearInterval(timer);
      await endless.close();
    }
  });

  test('a receiver that never answers fails the request at the deadline', async () => {
    const silent = await startReceiver(() => () => undefined);
    try {
      const started = Date.now();
      await assert.rejects(outboundFetch(silent.url, { ...post, timeoutMs: 300 }, loopbackAllowed));
      const took = Date.now() - started;
      assert.ok(took >= 250 && took < 2000, `failed after ${took} ms`);
    } finally {
      await silent.close();
    }
  });

  test('a resolver that hangs fails at the deadline too', async () => {
    const hanging: ResolveAll = () => new Promise(() => undefined);
    await assert.rejects(outboundFetch('https://slow.example.test/', { ...post, timeoutMs: 200 }, strict, hanging),
      (err: Error) => err instanceof ResolveError && err.message === 'resolving slow.example.test took longer than 200 ms');
  });

  test('a host that does not resolve fails without sending, and is not a refusal', async () => {
    await assert.rejects(outboundFetch('https://nowhere.invalid/', post, strict, async () => []),
      (err: Error) => err instanceof ResolveError && err.message === 'nowhere.invalid does not resolve');
    const failing: ResolveAll = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); };
    await assert.rejects(outboundFetch('https://nowhere.invalid/', post, strict, failing),
      (err: Error) => err instanceof ResolveError && err.message === 'nowhere.invalid does not resolve (ENOTFOUND)');
  });
});
