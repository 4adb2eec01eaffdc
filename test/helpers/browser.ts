/**
 * Headless Chromium for the UI tests: Debian's `chromium` package driven by playwright-core, and screenshots
 * saved to test-output/ and checked to be real pictures of the page.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO } from './imports.ts';

export const VIEWPORT = { width: 1280, height: 800 };

/** CHROMIUM_PATH, else `chromium` on the PATH; a test that needs it fails, with what to install, when neither. */
export function chromiumPath(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    assert.fail('No Chromium: install Debian\'s chromium package (apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary');
  }
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI and test containers run as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
}

/** The width and height in a PNG's IHDR chunk, after checking the signature. */
export function pngSize(png: Buffer): { width: number; height: number } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'not a PNG');
  assert.equal(png.toString('latin1', 12, 16), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * Saves screenshots under test-output/<folder>/ and checks each: a PNG of the viewport's size, larger than a
 * blank page's (so something is drawn), and unlike the one before (so the step changed the page).
 */
export class Screenshots {
  readonly dir: string;
  private blankBytes = 0;
  private previous: Buffer | undefined;
  private count = 0;

  constructor(folder: string) {
    this.dir = join(REPO, 'test-output', folder);
    mkdirSync(this.dir, { recursive: true });
  }

  /** A blank page's screenshot size: the floor every later screenshot must clear. */
  async measureBlank(page: Page): Promise<void> {
    await page.goto('about:blank');
    const blank = await page.screenshot();
    pngSize(blank);
    this.blankBytes = blank.length;
  }

  async take(page: Page, name: string): Promise<string> {
    this.count += 1;
    const path = join(this.dir, `${String(this.count).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path });
    const png = readFileSync(path);
    assert.deepEqual(pngSize(png), VIEWPORT, `${name}: not the viewport's size`);
    assert.ok(png.length > this.blankBytes * 2, `${name}: ${png.length} bytes is about a blank page's ${this.blankBytes}`);
    if (this.previous) assert.ok(!png.equals(this.previous), `${name}: the same picture as the step before`);
    this.previous = png;
    return path;
  }
}
