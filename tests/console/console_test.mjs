// The console in a real browser: Debian's Chromium driven by playwright-core, against a real `suanli up`
// (simulated GPUs, real containers on Podman). Run by ../console_end_to_end_test.sh, which starts the
// platform and passes: URL, a renter's token with credits, a token with almost none, and a folder for
// the screenshots (one per page: look at them).
import {chromium} from 'playwright-core';

const [url, token, poorToken, adminToken, shots] = process.argv.slice(2);
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--no-first-run'],
});
const page = await browser.newPage({viewport: {width: 1280, height: 900}});
const pageErrors = [];
page.on('pageerror', (error) => pageErrors.push(error.message));
const shot = (name) => page.screenshot({path: `${shots}/${name}.png`, fullPage: true});
const signIn = async (secret) => {
  await page.fill('#token', secret);
  await page.click('form button[type=submit]');
};

try {
  // Sign in: a wrong token is refused with the server's reason and not kept.
  await page.goto(url + '/');
  await page.waitForSelector('#token');
  check(await page.isHidden('#nav'), 'signed out, the navigation is hidden');
  await signIn('sl_not_a_token');
  await page.waitForSelector('.error');
  check((await page.textContent('.error')).includes('unknown or revoked'), 'a bad token says why');
  check(await page.evaluate(() => localStorage.getItem('suanli.token')) === null, 'a bad token is not kept');
  await shot('sign-in');

  // Too little balance: the deploy form shows the server's refusal.
  await signIn(poorToken);
  await page.waitForSelector('table.gpus');
  await page.click('nav a[href="#/deploy"]');
  await page.waitForSelector('#template option[value="demo-http"]', {state: 'attached'});
  await page.selectOption('#template', 'demo-http');
  await page.click('form button[type=submit]');
  await page.waitForSelector('.error');
  check(/balance|credit/i.test(await page.textContent('.error')), 'too little balance is refused with the reason');
  await shot('deploy-refused');
  await page.click('#sign-out');
  await page.waitForSelector('#token');

  // GPUs: the catalog, sorted and filtered, two side by side.
  await signIn(token);
  await page.waitForSelector('table.gpus');
  const rows = await page.locator('table.gpus tbody tr').count();
  check(rows >= 35, `the GPU table lists the catalog (${rows} types)`);
  check(await page.isHidden('#admin-link'), 'a renter sees no Admin page');
  check(await page.isVisible('table.gpus >> text=RTX 4090'), 'RTX 4090 is listed');
  await page.fill('input[type=number] >> nth=0', '80');
  const big = await page.locator('table.gpus tbody tr').count();
  check(big > 0 && big < rows, `min VRAM 80 GB leaves ${big} types`);
  await page.fill('input[type=number] >> nth=0', '');
  await page.check('input[aria-label="compare RTX 4090"]');
  await page.check('input[aria-label="compare A100 80GB SXM"]');
  check(await page.isVisible('table.compare'), 'two ticked GPUs are compared side by side');
  await shot('gpus');

  // The advisor: a workload, every GPU type estimated, a pick with its reason, and "Deploy this".
  await page.click('nav a[href="#/advisor"]');
  await page.waitForSelector('#model option[value="llama-3-8b"]', {state: 'attached'});
  await page.selectOption('#model', 'llama-3-8b');
  await page.selectOption('#task', 'lora');
  await page.click('form button[type=submit]');
  await page.waitForSelector('.recommendation h2');
  const pick = await page.textContent('.recommendation h2');
  check(pick.startsWith('Pick '), `the advisor recommends: ${pick}`);
  check((await page.textContent('.recommendation p')).length > 20, 'the recommendation says why');
  const estimated = await page.locator('table.advice tbody tr').count();
  check(estimated >= 35, `every GPU type is estimated (${estimated})`);
  await shot('advisor');
  await page.click('text=Deploy this');
  await page.waitForURL(/#\/deploy\?gpu=/);
  check(true, 'Deploy this opens the deploy form for the pick');

  // Deploy from a template on simulated GPUs: the price first, then the pod's page.
  await page.click('nav a[href="#/deploy"]');
  await page.waitForSelector('#template option[value="demo-http"]', {state: 'attached'});
  await page.selectOption('#template', 'demo-http');
  check((await page.textContent('.price')).includes('per hour'), 'the price per hour shows before deploying');
  check((await page.textContent('#gpu')).includes('(simulated)'), 'simulated GPUs are marked');
  await shot('deploy');
  await page.click('form button[type=submit]');
  await page.waitForURL(/#\/pods\/pod_/);
  const podId = page.url().split('/').pop();
  await page.waitForSelector('text=running, ready', {timeout: 120000});
  check(true, `pod ${podId} is running and ready`);

  // Reach it: its HTTP port through the proxy by the pod's link, and its logs.
  const link = await page.getAttribute('a:has-text("HTTP port 8080")', 'href');
  const other = await browser.newPage();
  await other.goto(url + link);
  check((await other.textContent('body')).includes('suanli demo pod'), 'the pod link opens its HTTP port');
  check(!other.url().includes('suanli_link'), 'the link token leaves the address bar');
  await other.close();
  await page.waitForFunction(() => document.querySelector('pre.logs')?.textContent.includes('url:/'),
                             null, {timeout: 30000});
  check(true, 'the logs show the request the pod answered');
  await shot('pod');

  // Stop it: only the actions its state allows, and the storage that keeps running.
  await page.waitForTimeout(1500);  // a few seconds of GPU time, billed whole
  await page.click('.actions button:has-text("stop")');
  await page.waitForSelector('.state-stopped', {timeout: 60000});
  const actions = await page.locator('.actions button').allTextContents();
  check(actions.includes('start') && !actions.includes('stop'), `a stopped pod offers ${actions.join(', ')}`);
  check(await page.isVisible('text=While stopped'), 'the storage price of a stopped pod is shown');
  await shot('pod-stopped');

  await page.click('nav a[href="#/pods"]');
  await page.waitForSelector(`table.pods >> text=${podId}`);
  await shot('pods');

  // Billing: the pod's charge and the balance.
  await page.click('nav a[href="#/billing"]');
  await page.waitForSelector('#balance');
  check(await page.isVisible(`table.usage >> text=${podId}`), 'the pod is in the usage per pod');
  const balance = await page.textContent('#balance');
  check(/^\$19\.99\d*$/.test(balance), `the balance went down from $20.00 to ${balance}`);
  await shot('billing');

  // A phone's width, then sign out.
  await page.setViewportSize({width: 390, height: 844});
  await page.click('nav a[href="#/gpus"]');
  await page.waitForSelector('table.gpus');
  await page.screenshot({path: `${shots}/gpus-phone.png`});
  await page.click('#sign-out');
  await page.waitForSelector('#token');
  check(await page.evaluate(() => localStorage.getItem('suanli.token')) === null, 'sign-out forgets the token');

  // Admin: the node and its simulated GPUs, a join token, credit for a user, a price.
  await page.setViewportSize({width: 1280, height: 900});
  await signIn(adminToken);
  await page.waitForSelector('table.gpus');
  await page.click('nav a[href="#/admin"]');
  await page.waitForSelector('table.nodes');
  check((await page.textContent('table.nodes')).includes('2x RTX 4090 (simulated)'), 'the node shows its simulated GPUs');
  await page.click('#create-join-token');
  await page.waitForSelector('pre.command');
  check((await page.textContent('pre.command')).includes('--join-token slj_'), 'a join token comes with the agent command');
  await page.selectOption('#credit-user', {label: 'poor'});
  await page.fill('#credit-amount', '5');
  await page.click('form.inline button:has-text("Add credit")');
  await page.waitForSelector('table.users >> text=$5.01');
  check(true, "the poor user's balance is $5.01 after $5 of credit");
  await page.selectOption('#price-gpu', 'RTX 4090');
  await page.fill('#price-value', '0.5');
  await page.click('form.inline button:has-text("Set price")');
  await page.waitForTimeout(500);
  await shot('admin');
  await page.click('nav a[href="#/gpus"]');
  await page.waitForSelector('table.gpus');
  const row = await page.textContent('table.gpus tbody tr:has-text("RTX 4090 ")');
  check(row.includes('$0.50'), `the new price shows on the GPUs page (${row.replace(/\s+/g, ' ').trim()})`);
  check(pageErrors.length === 0, `no script errors${pageErrors.length ? ': ' + pageErrors.join('; ') : ''}`);
} catch (error) {
  check(false, error.message.split('\n')[0]);
  await page.screenshot({path: `${shots}/failure.png`, fullPage: true}).catch(() => {});
} finally {
  await browser.close();
}
console.log(failures === 0 ? 'console end to end: passed' : `console end to end: ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
