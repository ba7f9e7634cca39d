#!/usr/bin/env node
/* html_report.js - opens an objscope HTML report in headless Chromium
 * (Debian's /usr/bin/chromium, driven by playwright-core) and checks it.
 *
 * usage: node tests/browser/html_report.js REPORT.html SCREENSHOT.png
 *            [--alloc FN --access FN | --empty]
 *
 *   --alloc FN    the top row of the object table is allocated at FN
 *   --access FN   FN is not shown before that row is selected and is among
 *                 its access paths (table and flame graph) after a click
 *   --empty       the page says why the profile is empty and draws no graph
 *   --attributed N  the header's coverage shows N attributed samples
 * Always: the page loads with no console error or page error and makes no
 * request other than the file itself; a screenshot is written.
 * Exit status 0 when every check passes, 1 otherwise (one line per failure
 * on stderr), 2 on a usage or launch error. */
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.OBJSCOPE_CHROMIUM || '/usr/bin/chromium';

function usage() {
  console.error('usage: html_report.js REPORT.html SCREENSHOT.png [--alloc FN --access FN | --empty] [--attributed N]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { report: argv[0], shot: argv[1], alloc: null, access: null, empty: false, attributed: null };
  if (!o.report || !o.shot) usage();
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--alloc') o.alloc = argv[++i];
    else if (argv[i] === '--access') o.access = argv[++i];
    else if (argv[i] === '--empty') o.empty = true;
    else if (argv[i] === '--attributed') o.attributed = Number(argv[++i]);
    else usage();
  }
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const url = 'file://' + path.resolve(o.report);
  const failures = [];
  const fail = (msg) => failures.push(msg);
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'objscope-chromium-'));
  let context;

  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (e) {
    console.error('cannot start ' + CHROMIUM + ': ' + e.message.split('\n')[0]);
    fs.rmSync(profileDir, { recursive: true, force: true });
    process.exit(2);
  }
  try {
    const page = context.pages()[0] || await context.newPage();
    const requests = [];
    context.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
    page.on('console', (m) => { if (m.type() === 'error') fail('console error: ' + m.text()); });
    page.on('pageerror', (e) => fail('page error: ' + e.message));

    await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(300);

    const title = await page.title();
    if (!/objscope/.test(title)) fail('title is "' + title + '"');
    const emptyShown = await page.isVisible('#empty');
    const command = (await page.textContent('#command')) || '';
    if (!command.trim()) fail('the header does not show the command');
    const coverage = (await page.textContent('#coverage')) || '';
    if (o.attributed !== null &&
        !coverage.includes(o.attributed.toLocaleString('en-US') + ' attributed to objects'))
      fail('the header does not show ' + o.attributed + ' attributed samples: ' + coverage);
    for (const word of ['duration', 'sampler', 'period', 'lost', 'dropped', 'GCs'])
      if (!((await page.textContent('#facts')) || '').includes(word)) fail('the header lacks ' + word);
    if (o.empty) {
      const why = (await page.textContent('#why')) || '';
      if (!emptyShown) fail('the empty-profile notice is not shown');
      if (why.trim().length < 10) fail('the empty-profile notice does not say why: "' + why + '"');
      if (await page.locator('#alloc-flame svg').count()) fail('a flame graph was drawn for an empty profile');
    } else if (emptyShown) {
      fail('the empty-profile notice is shown: ' + await page.textContent('#why'));
    }

    if (o.alloc) {
      const first = page.locator('#objects tbody tr').first();
      const cell = (await first.textContent()) || '';
      if (!cell.includes(o.alloc)) fail('top object row does not show ' + o.alloc + ': "' + cell + '"');
      const rects = await page.locator('#alloc-flame svg g').count();
      if (rects < 2) fail('allocation flame graph has ' + rects + ' frames');
      const flameText = (await page.textContent('#alloc-flame')) || '';
      if (!flameText.includes(o.alloc)) fail('allocation flame graph does not show ' + o.alloc);
      if (o.access) {
        const before = (await page.textContent('#detail')) || '';
        if (await page.isVisible('#detail-body')) fail('object details shown before any selection');
        if (before.includes(o.access)) fail(o.access + ' shown before the object was selected');
        await first.click();
        await page.waitForTimeout(500);
        if (!(await first.getAttribute('class') || '').includes('selected')) fail('clicked row is not marked selected');
        const allocPath = (await page.textContent('#alloc-path')) || '';
        if (!allocPath.includes(o.alloc)) fail('selected object\'s allocation path lacks ' + o.alloc + ': ' + allocPath);
        const access = (await page.textContent('#access-paths')) || '';
        if (!access.includes(o.access)) fail('access paths lack ' + o.access + ': ' + access.slice(0, 300));
        if (!/\d+(\.\d)?%/.test(access)) fail('access paths show no share');
        const af = (await page.textContent('#access-flame')) || '';
        if (!af.includes(o.access)) fail('access flame graph lacks ' + o.access);
      }
      /* Sorting: by samples ascending puts the top object last. */
      const hdr = page.locator('#objects thead th', { hasText: 'samples' });
      await hdr.click();
      await hdr.click();
      const firstAfter = (await page.locator('#objects tbody tr').first().textContent()) || '';
      const rows = await page.locator('#objects tbody tr').count();
      if (rows > 1 && firstAfter.includes(o.alloc)) fail('sorting by samples ascending kept the top object first');
      await hdr.click(); /* back to descending for the screenshot */
    }
    for (const tab of ['types', 'threads']) {
      await page.click('#tabs button[data-tab="' + tab + '"]');
      const rows = await page.locator('#' + tab + ' tbody tr').count();
      if (!rows) fail('the ' + tab + ' view has no rows');
      if (!o.empty && (await page.textContent('#' + tab + ' tbody')).trim() === 'none')
        fail('the ' + tab + ' view is empty');
    }
    await page.click('#tabs button[data-tab="objects"]');
    await page.waitForTimeout(400);
    await page.screenshot({ path: o.shot, fullPage: true });
    if (requests.length) fail(requests.length + ' network request(s): ' + requests.slice(0, 5).join(' '));
  } finally {
    await context.close();
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
  for (const f of failures) console.error('html_report: ' + f);
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => { console.error('html_report: ' + e.stack); process.exit(2); });
