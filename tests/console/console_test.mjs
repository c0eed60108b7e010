// The console in a real browser: Debian's Chromium driven by playwright-core, against a real `suanli up`
// (simulated GPUs, real containers on Podman). Run by ../console_end_to_end_test.sh, which starts the
// platform and passes: URL, a renter's token with credits, a token with almost none, and a folder for
// the screenshots (one per page: look at them).
import {generateKeyPairSync} from 'node:crypto';
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
// Console errors too (a CSP violation is one), but not the failed loads the error paths cause on purpose.
page.on('console', (message) => {
  if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
});
page.on('dialog', (dialog) => dialog.accept());  // terminate asks first
const apiGet = async (path, secret) =>
  (await fetch(url + path, {headers: {Authorization: 'Bearer ' + secret}})).json();
const apiPost = async (path, secret, body) => (await fetch(url + path, {
  method: 'POST', headers: {Authorization: 'Bearer ' + secret, 'Content-Type': 'application/json'}, body: JSON.stringify(body)})).json();
// What a chart on the page draws, read from Chart.js itself: {labels, datasets: [{label, data}]}.
const chartData = (selector) => page.evaluate((s) => {
  const drawn = window.Chart.getChart(document.querySelector(s + ' canvas'));
  return drawn && {labels: drawn.data.labels, datasets: drawn.data.datasets.map((d) => ({label: d.label, data: d.data}))};
}, selector);
const points = (data) => data.datasets.reduce((sum, d) => sum + d.data.length, 0);
// A chart's scales by id ({x, y} for a chart with one value axis) and the name boxes it drew.
const chartScales = (selector) => page.evaluate((s) => Object.keys(window.Chart.getChart(document.querySelector(s + ' canvas')).scales), selector);
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
// Whether an element's top is on the screen (not below the fold, not scrolled past).
const inView = (selector) => page.evaluate((s) => {
  const box = document.querySelector(s).getBoundingClientRect();
  return box.top >= 0 && box.top < window.innerHeight - 100;
}, selector);
// An OpenSSH ed25519 public key: "ssh-ed25519 " + base64(string "ssh-ed25519", string key).
function sshPublicKey(comment) {
  const raw = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({format: 'jwk'}).x, 'base64url');
  const field = (bytes) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]).toString('base64')} ${comment}`;
}
const shot = (name) => page.screenshot({path: `${shots}/${name}.png`, fullPage: true});
const signIn = async (secret) => {
  await page.fill('#token', secret);
  await page.click('form button[type=submit]');
};
// The page shown, at 1,400 px and at a phone's 390: never wider than the window, and each table
// whole on the screen at 1,400 (no table is clipped there) and, on the phone, either whole or
// scrolling sideways inside a box of its own that is. `longMessage`: the Events table's first
// message first gets words as long as volume.snapshot_ready's SHA-256 and a long URL (its width is
// measured in the same task, before the page's next poll can draw the table again).
async function checkWidths(name, longMessage = false) {
  for (const width of [1400, 390]) {
    await page.setViewportSize({width, height: 900});
    // Chart.js redraws a chart for its new box a frame or two after a resize.
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.waitForTimeout(100);
    const problems = await page.evaluate(([wide, long]) => {
      const root = document.documentElement;
      if (long) {
        document.querySelector('table.events td:last-child')
          .append(` SHA-256 ${'9f'.repeat(32)} https://example.com/${'a'.repeat(120)}`);
      }
      const found = root.scrollWidth > root.clientWidth ? [`the page is ${root.scrollWidth} px wide`] : [];
      for (const table of document.querySelectorAll('main table')) {
        const box = table.getBoundingClientRect();
        if (box.left >= 0 && box.right <= root.clientWidth) continue;  // whole on the screen
        let frame = table.parentElement;
        while (frame && !/auto|scroll/.test(getComputedStyle(frame).overflowX)) frame = frame.parentElement;
        const shown = frame && frame.getBoundingClientRect();
        if (wide || !shown || shown.left < 0 || shown.right > root.clientWidth) {
          found.push(`table.${table.className} reaches ${Math.round(box.right)} px` + (frame ? ', scrolling in its box' : ''));
        }
      }
      return found;
    }, [width >= 1400, longMessage]);
    check(problems.length === 0, `${name} at ${width} px: ${problems.join('; ') || 'fits'}`);
  }
  await page.setViewportSize({width: 1280, height: 900});
}
// Each destructive button seen (its page, class and colour): they must all look the same, red.
const dangerButtons = [];
const noteDangerButton = async (what, selector) => dangerButtons.push({what, ...await page.$eval(selector,
  (b) => ({className: b.className, background: getComputedStyle(b).backgroundColor}))});

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
  await page.waitForSelector('input[name=template][value=demo-http]');
  await page.check('input[name=template][value=demo-http]');
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
  // The chart: one bubble per listed GPU, the five common picks (in all their variants) apart.
  await page.waitForSelector('#gpu-chart canvas');
  let bubbles = await chartData('#gpu-chart');
  const commonRows = await page.locator('table.gpus tbody tr:has(.tag)').count();
  check(points(bubbles) === rows, `the chart has a bubble for each of the ${rows} GPUs (${points(bubbles)})`);
  check(bubbles.datasets[0].data.length === commonRows && commonRows >= 5,
        `the common picks are their own series (${bubbles.datasets[0].data.length} of ${commonRows})`);
  const tags = await page.locator('table.gpus .tag').allTextContents();
  check(!/seed/i.test(tags.join(' ') + bubbles.datasets.map((d) => d.label).join(' ')),
        `no "seed" jargon in the badges or the legend (${bubbles.datasets[0].label}; ${tags[0]})`);
  const names = await page.evaluate(() => window.Chart.getChart(document.querySelector('#gpu-chart canvas')).$names);
  check(names && names.length >= 5 && names.every((a, i) => names.every((b, j) => i === j || !overlap(a, b))),
        `the names on the chart do not overlap (${names && names.map((n) => n.name).join(', ')})`);
  await page.fill('input[type=number] >> nth=0', '80');
  const big = await page.locator('table.gpus tbody tr').count();
  check(big > 0 && big < rows, `min VRAM 80 GB leaves ${big} types`);
  check(points(await chartData('#gpu-chart')) === big, 'the chart follows the filter');
  await page.fill('input[type=number] >> nth=0', '');
  await page.selectOption('#chart-against', 'bandwidth_gbs');
  bubbles = await chartData('#gpu-chart');
  const catalog = (await apiGet('/v1/gpus', token)).gpus;
  const rtx4090 = catalog.find((g) => g.name === 'RTX 4090');
  const plotted = bubbles.datasets[0].data.find((point) => point.gpu.name === 'RTX 4090');
  check(plotted && plotted.x === rtx4090.bandwidth_gbs && plotted.y === rtx4090.price_per_hour_micros / 1e6,
        `against bandwidth, RTX 4090 sits at ${plotted && plotted.x} GB/s and $${plotted && plotted.y}/h`);
  await shot('gpus-bandwidth-chart');
  await page.selectOption('#chart-against', 'bf16_tflops');
  await page.check('input[aria-label="compare RTX 4090"]');
  await page.check('input[aria-label="compare A100 80GB SXM"]');
  check(await page.isVisible('table.compare'), 'two ticked GPUs are compared side by side');
  await shot('gpus');
  await checkWidths('the GPUs page');

  // The advisor: first on this cloud's GPU types (the default), each with how many it has free.
  await page.click('nav a[href="#/advisor"]');
  await page.waitForSelector('#model option[value="llama-3-8b"]', {state: 'attached'});
  await page.selectOption('#model', 'llama-3-8b');
  await page.selectOption('#task', 'lora');
  await page.click('form button[type=submit]');
  await page.waitForSelector('#advice-scope');
  const here = (await apiGet('/v1/availability', token)).gpus.filter((g) => g.total > 0).map((g) => g.gpu_type);
  const clusterRows = await page.locator('table.advice tbody tr').allTextContents();
  check(/this cloud's GPU types/.test(await page.textContent('#advice-scope')) && clusterRows.length === here.length &&
        clusterRows.every((row) => here.some((gpu) => row.includes(gpu)) && /\d+ of \d+ free/.test(row)),
        `by default only this cloud's ${here.length} GPU type(s) are ranked, with their free counts`);
  // The local agent measured its GPUs (a simulated probe: console_end_to_end_test.sh), so this
  // cloud's RTX 4090s are predicted from their measurements, and the page says so.
  let measured = null;  // the agent measures once it starts, and says so with its next heartbeat
  for (let i = 0; i < 40 && !measured; ++i) {
    measured = (await apiGet('/v1/availability', token)).gpus.find((g) => g.gpu_type === 'RTX 4090').measured;
    if (!measured) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (measured) {  // the advice was asked for before: ask again
    await page.click('form button[type=submit]');
    await page.waitForSelector('#advice-measured');
  }
  check(measured && measured.gpus === 2 && measured.memory_bandwidth_gbps === 635,
        `the agent's measurements are this cloud's: ${JSON.stringify(measured)}`);
  check(measured && /RTX 4090 \(2 GPUs: memory at 70 %, tensor at 100 % of a healthy card\)/.test(await page.textContent('#advice-measured')) &&
        (await page.locator('table.advice tbody tr').allTextContents()).every((row) => row.includes('measured')),
        `the advice says its RTX 4090 figures are measured`);
  const clusterPick = await page.textContent('.recommendation h2');
  check(here.some((gpu) => clusterPick.endsWith(gpu)) && await page.isVisible('text=Deploy this'),
        `its pick (${clusterPick}) is one of them, and can be deployed here`);

  // Then every GPU type in the catalog: a pick with its reason, charts, buy or rent.
  await page.check('#advice-market');
  await page.click('form button[type=submit]');
  await page.waitForSelector('#advice-scope:has-text("Every GPU type")');
  const pick = await page.textContent('.recommendation h2');
  check(pick.startsWith('Pick '), `the advisor recommends: ${pick}`);
  check((await page.textContent('.recommendation p')).length > 20, 'the recommendation says why');
  const estimated = await page.locator('table.advice tbody tr').count();
  check(estimated >= 35, `every GPU type is estimated (${estimated})`);
  const fitting = await page.locator('table.advice tbody tr:has(td:text-is("yes"))').count();
  const costBars = await chartData('#advice-cost-chart');
  const timeBars = await chartData('#advice-time-chart');
  check(costBars.labels.length === Math.min(15, fitting) && costBars.datasets.length === 1 && timeBars.datasets.length === 1 &&
        JSON.stringify(timeBars.labels) === JSON.stringify(costBars.labels),
        `two charts show cost and time on the ${costBars.labels.length} best of ${fitting} fitting types`);
  const scales = [await chartScales('#advice-cost-chart'), await chartScales('#advice-time-chart')];
  check(scales.every((s) => s.sort().join() === 'x,y'), `each chart has one value scale (${scales.join('; ')})`);
  check(pick.endsWith(costBars.labels[0]), `the chart starts with the pick (${costBars.labels[0]})`);
  check(/pays off after [\d,]+ hours of use/.test(await page.textContent('#buy-or-rent')), 'buy or rent is answered');
  // Each prediction carries its error band: a LoRA fine-tune's, from the bench's leave-one-source-out table.
  const band = (await apiPost('/v1/advise', token, {workload: {model: 'llama-3-8b', task: 'lora'}, scope: 'market'})).speed_error;
  check(band && band.kind === 'finetune_llm' && band.median_percent > 0 &&
        (await page.textContent('#advice-error')).includes(`±${band.median_percent.toFixed(1)} %`),
        `the answer says how far off its predictions typically are (${JSON.stringify(band)})`);
  const firstFit = await page.textContent('table.advice tbody tr:has(td:text-is("yes"))');
  check(firstFit.split(`±${Math.round(band.median_percent)}%`).length - 1 === 3, `speed, time and cost each show the band: ${firstFit}`);
  check(await inView('.recommendation'), 'the answer is scrolled into view, not left below the form');
  await shot('advisor');
  await checkWidths('the advisor and its answer');

  // The form shows the fields that apply: a batch stays when the task changes, goes with the model.
  await page.fill('#batch', '4');
  await page.selectOption('#task', 'qlora');
  check(await page.inputValue('#batch') === '4' && await page.isVisible('#tokens'), 'a new task keeps the batch');
  await page.selectOption('#model', 'sd-1.5');
  check(await page.inputValue('#batch') === '', 'a new model clears the batch typed for the old one');
  check(await page.isVisible('#images') && await page.isVisible('#requests') && await page.isHidden('#tokens') &&
        await page.isHidden('#seq'), 'a diffusion model asks for images or requests, not tokens or a sequence');
  check(await page.inputValue('#task') === 'infer' && await page.isDisabled('#task option[value=lora]'),
        'a diffusion model is not offered for training');
  await page.fill('#images', '5000');
  await page.click('form button[type=submit]');
  await page.waitForSelector('#advice-work:has-text("5,000 images")');
  check((await page.textContent('#advice-work')).startsWith('sd-1.5, infer'), 'sd-1.5 is estimated for 5,000 images');
  check(/diffusion inference/.test(await page.textContent('#advice-error')), 'a diffusion answer has the diffusion band');
  await page.selectOption('#model', 'llama-3-8b');
  check(await page.isHidden('#images') && await page.isVisible('#tokens') && await page.inputValue('#tokens') === '',
        'back on a language model: tokens, empty, and no images');
  await page.screenshot({path: `${shots}/advisor-diffusion.png`});

  // A model the zoo lacks, by its Hugging Face config.json; a file that is not JSON is refused.
  await page.selectOption('#model', '');
  await page.fill('#hf-config', '{"model_type": "llama", "hidden_size": 2048');
  await page.click('form button[type=submit]');
  await page.waitForSelector('.error');
  check((await page.textContent('.error')).includes('not JSON'), 'a broken config.json is refused with the reason');
  await page.fill('#hf-config', JSON.stringify({
    model_type: 'llama', _name_or_path: 'my-org/tiny-llama', hidden_size: 2048, intermediate_size: 5632,
    num_hidden_layers: 22, num_attention_heads: 32, num_key_value_heads: 4, vocab_size: 32000,
    max_position_embeddings: 2048}));
  await page.click('form button[type=submit]');
  await page.waitForSelector('.recommendation p');
  check((await page.textContent('.recommendation p')).startsWith('my-org/tiny-llama needs'),
        'the advisor estimates a model from its config.json');
  await shot('advisor-hf-config');
  await page.selectOption('#model', 'llama-3-8b');
  await page.uncheck('#advice-market');  // "Deploy this" is offered for this cloud's GPUs only
  await page.click('form button[type=submit]');
  await page.waitForSelector('.recommendation p:has-text("llama-3-8b")');
  await page.click('text=Deploy this');
  await page.waitForURL(/#\/deploy\?gpu=/);
  check(true, 'Deploy this opens the deploy form for the pick');

  // Deploy from a template on simulated GPUs: the price first, then the pod's page.
  await page.click('nav a[href="#/deploy"]');
  await page.waitForSelector('input[name=template][value=demo-http]');
  await page.check('input[name=template][value=demo-http]');
  check((await page.textContent('.price')).includes('per hour'), 'the price per hour shows before deploying');
  check((await page.textContent('#gpu')).includes('(simulated)'), 'simulated GPUs are marked');
  check(await page.getAttribute('#vcpu', 'placeholder') === '2', 'the default vCPU is shown');
  // Its widths before it is filled in: filled, it is sent at once, as a user would (once, in CI,
  // the pod came without the fields filled in before the resizes).
  await checkWidths('the deploy form');
  await page.fill('#vcpu', '1');  // CI has 2 cores: the node has no more
  await page.fill('#memory', '2');
  const key = sshPublicKey('tester@console');
  await page.fill('#ssh-key', key);
  await page.fill('#idle-stop-after', '1d');  // never reached here; shown on the pod's page
  await page.fill('#terminate-after-stopped', '30d');  // the same
  await page.check('#terminate-deletes-volume');
  await page.fill('#pod-name', 'console-demo');
  await shot('deploy');
  await page.click('form button[type=submit]');
  await page.waitForURL(/#\/pods\/pod_/);
  const podId = page.url().split('/').pop();
  const created = await apiGet('/v1/pods/' + podId, token);
  check(created.vcpu === 1 && created.memory_gb === 2, `the pod has the vCPU and RAM asked for (${created.vcpu}, ${created.memory_gb} GB)`);
  check(created.idle_stop_after_s === 86400, `the pod has the idle stop asked for (${created.idle_stop_after_s})`);
  check(created.terminate_after_stopped_s === 30 * 86400,
        `the pod has the auto-terminate asked for (${created.terminate_after_stopped_s})`);
  check(created.name === 'console-demo', `the pod has the name asked for (${created.name})`);
  const keys = (await apiGet('/v1/ssh-keys', token)).ssh_keys;
  check(keys.some((k) => k.public_key === key && k.name === 'tester@console'), 'the SSH key is kept for the pods');
  await page.waitForSelector('text=running, ready', {timeout: 120000});
  check(true, `pod ${podId} is running and ready`);
  check(await page.isVisible('dd:has-text("when idle for 1d00h")'), "the pod's page shows its auto-stop");
  check(await page.isVisible('dd:has-text("once left stopped for 30d")'), "the pod's page shows its auto-terminate");

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
  await checkWidths("a pod's page");
  await noteDangerButton("a pod's terminate", '.actions button:has-text("terminate")');
  // While it runs, usage counts what the balance already subtracts: the seconds since the last slice.
  const usageNow = (await apiGet('/v1/billing/usage?by=pod', token)).usage;
  const balanceNow = await apiGet('/v1/billing/balance', token);
  const drift = 20e6 - usageNow.reduce((sum, r) => sum + r.total_micros, 0) - balanceNow.balance_micros;
  check(usageNow.every((r) => 'unbilled_micros' in r) && drift >= 0 &&
        drift <= balanceNow.spend_rate_per_hour_micros / 3600 * 2 + 10,
        `usage and balance agree while the pod runs (${drift} micro-dollars apart)`);

  // No free GPU: two more RTX 4090 while one of the node's two runs; the pod waits and says why.
  await page.click('nav a[href="#/deploy"]');
  await page.waitForSelector('input[name=template][value=demo-http]');
  await page.check('input[name=template][value=demo-http]');
  // On a host with 2 vCPU the pod's 1 leaves too few for another pod's default 2: its idle GPU is
  // not counted free, and the form says why.
  const gpuText = await page.textContent('#gpu');
  check(gpuText.includes('1 of 2 free') ||
        gpuText.includes('0 of 2 free (1 more idle, without the vCPU or RAM to use it)'),
        'the deploy form shows one of the two GPUs taken: ' + gpuText);
  await page.fill('#count', '2');
  await page.fill('#vcpu', '1');
  await page.fill('#memory', '2');
  await page.click('form button[type=submit]');
  await page.waitForURL((address) => /#\/pods\/pod_/.test(address.hash) && !address.hash.endsWith(podId));
  const pendingId = page.url().split('/').pop();
  await page.waitForSelector('.state-pending');
  await page.waitForSelector('dd:has-text("no node has 2 free RTX 4090")');
  check(true, 'with no free GPU the pod is pending and says why');
  // Its price is the one it will be billed at once it runs (its own field is 0 until then).
  const perGpu = (await apiGet('/v1/gpus', token)).gpus.find((g) => g.name === 'RTX 4090').price_per_hour_micros;
  const pendingPrice = await page.evaluate(() => [...document.querySelectorAll('dl.detail dt')]
    .find((dt) => dt.textContent === 'Price').nextElementSibling.textContent);
  check(perGpu > 0 && !pendingPrice.includes('$0.00/h') && pendingPrice.startsWith(`$${(2 * perGpu / 1e6).toFixed(2)}/h GPU`),
        `a pending pod shows the price of its 2 GPUs, not $0.00/h (${pendingPrice})`);
  await shot('pod-pending');
  await page.click('.actions button:has-text("terminate")');
  await page.waitForSelector('.state-terminated', {timeout: 30000});
  await page.goto(`${url}/#/pods/${podId}`);
  await page.waitForSelector('text=running, ready');

  // Stop it: only the actions its state allows, and the storage that keeps running.
  await page.waitForTimeout(1500);  // a few seconds of GPU time, billed whole
  await page.click('.actions button:has-text("stop")');
  await page.waitForSelector('.state-stopped', {timeout: 60000});
  const actions = await page.locator('.actions button').allTextContents();
  check(actions.includes('start') && !actions.includes('stop'), `a stopped pod offers ${actions.join(', ')}`);
  check(await page.isVisible('text=While stopped'), 'the storage price of a stopped pod is shown');
  // Its container is gone, and so are its links; its last logs are what the server kept.
  check(await page.isVisible('text=No ports to reach while it is not running'), 'a stopped pod shows no way in');
  await page.waitForFunction(() => document.querySelector('pre.logs')?.textContent.includes('url:/'),
                             null, {timeout: 15000});
  check(true, "a stopped pod's last logs are still shown");
  await shot('pod-stopped');

  await page.click('nav a[href="#/pods"]');
  await page.waitForSelector(`table.pods a[href="#/pods/${podId}"]:text-is("console-demo")`);
  check(await page.isHidden(`table.pods a[href="#/pods/${pendingId}"]`), 'terminated pods are hidden by default');
  check(await page.isHidden('table.pods th:text-is("Owner")'), 'a renter sees no Owner column');
  await page.check('#show-terminated');
  await page.waitForSelector(`table.pods a[href="#/pods/${pendingId}"]`);
  check(true, '"Show terminated pods" shows them');
  await page.uncheck('#show-terminated');
  await shot('pods');
  await checkWidths('the pods list');

  // Billing: the pod's charge and the balance.
  await page.click('nav a[href="#/billing"]');
  await page.waitForSelector('#balance');
  check(await page.isVisible(`table.usage >> text=${podId}`), 'the pod is in the usage per pod');
  const balance = await page.textContent('#balance');
  const exact = Number((await page.getAttribute('#balance', 'title')).slice(1));
  check(exact < 20 && exact > 19.9 && balance === '$' + exact.toFixed(2),
        `the balance went down from $20.00 to $${exact}, shown in cents as ${balance} (exact on hover)`);
  const cells = await page.locator('table.usage td.num').allTextContents();
  check(cells.every((c) => /^\$\d+\.\d\d$|^\$0\.0\d*$|^(\d+[dhms])+$|^\d+\.\d h$/.test(c)),
        `usage is in cents and GPU time readable, not ragged (${cells.slice(0, 5).join(', ')})`);
  const runway = await page.evaluate(() => [...document.querySelectorAll('dl.detail dt')]
    .find((dt) => dt.textContent === 'Runway').nextElementSibling.textContent);
  check(!/\d{3,}d/.test(runway), `the runway reads as people say it (${runway})`);
  const spend = await chartData('#spend-chart');
  const today = new Date().toISOString().slice(0, 10);
  check(spend.labels.includes(today) && spend.datasets[0].data[spend.labels.indexOf(today)] > 0,
        `the spend chart shows today's GPU spend (${spend.labels.join(', ')})`);
  // A billing form's submit re-renders the page once the server answered: until the old input is
  // gone, what the page (and the API) shows may be from before it.
  const submitAndWaitForRender = async (input, button) => {
    const before = await page.$(input);
    await page.click(`form.inline button:has-text("${button}")`);
    await page.waitForFunction((element) => !element.isConnected, before);
  };
  await page.fill('#spend-cap', '7.5');
  await submitAndWaitForRender('#spend-cap', 'Set cap');
  await page.waitForFunction(() => document.querySelector('#spend-cap')?.value === '7.5');
  check((await apiGet('/v1/billing/balance', token)).spend_cap_per_hour_micros === 7500000, 'the spend cap is set');
  await shot('billing');
  await checkWidths('the billing page');
  await page.fill('#spend-cap', '');
  await submitAndWaitForRender('#spend-cap', 'Set cap');
  await page.waitForFunction(() => document.querySelector('#spend-cap')?.value === '');
  check(!(await apiGet('/v1/billing/balance', token)).spend_cap_per_hour_micros, 'an empty cap removes it');
  // A monthly budget: this month's spend against it, and what happens at 100 %.
  await page.fill('#budget', '20');
  await page.selectOption('#budget-action', 'stop_interruptible');
  await submitAndWaitForRender('#budget', 'Set budget');
  await page.waitForSelector('#budget-progress');
  const budgeted = await apiGet('/v1/users/me', token);
  check(budgeted.monthly_budget_micros === 20000000 && budgeted.budget_action === 'stop_interruptible',
        `the budget is set: ${budgeted.monthly_budget_micros} ${budgeted.budget_action}`);
  check(/\$[\d.,]+ of \$20\.00 this month \(\d+ %\).*stop my interruptible pods/.test(await page.textContent('#budget-progress')),
        `the budget's progress is shown: ${await page.textContent('#budget-progress')}`);
  await shot('billing-budget');
  await page.fill('#budget', '');
  await submitAndWaitForRender('#budget', 'Set budget');
  await page.waitForFunction(() => document.querySelector('#budget')?.value === '' && !document.querySelector('#budget-progress'));
  check(!(await apiGet('/v1/users/me', token)).monthly_budget_micros, 'an empty budget removes it');

  // Events: the pod's stop, with its reason, newest first; filtered by kind.
  await page.click('nav a[href="#/events"]');
  await page.waitForSelector(`table.events >> text=${podId}`);
  check(await page.isVisible('table.events >> text=running -> stopped: stopped by its owner'),
        "the events list says the pod was stopped by its owner");
  await shot('events');
  await checkWidths('the events list, a message with a SHA-256 and a long URL', true);
  await page.selectOption('#event-kind', 'pod.idle_stop');
  await page.waitForSelector('text=No pod.idle_stop events');
  check(true, 'a kind with no events shows none');

  // Serverless endpoints: created from the form (the demo worker), listed with its job API, deleted.
  await page.click('nav a[href="#/endpoints"]');
  await page.waitForSelector('#endpoint-name');
  await page.fill('#endpoint-name', 'echo');
  await page.selectOption('#endpoint-template', 'demo-worker');
  await page.fill('#endpoint-gpu', '4090');
  await page.click('form.inline button:has-text("Create endpoint")');
  await page.waitForSelector('table.endpoints >> text=echo');
  const [made] = (await apiGet('/v1/endpoints', token)).endpoints;
  check(made && made.template === 'demo-worker' && made.max_workers === 3 && made.idle_timeout_s === 5,
        `the endpoint was created with the form's settings: ${JSON.stringify(made)}`);
  check(await page.isVisible(`table.endpoints >> text="/v2/${made.id}/run"`), 'its job API URL is shown');
  await shot('endpoints');
  await checkWidths('the endpoints page');
  await noteDangerButton("an endpoint's delete", 'table.endpoints button:has-text("Delete")');
  await page.click('table.endpoints button:has-text("Delete")');
  await page.waitForSelector('text=No endpoints yet');
  check((await apiGet('/v1/endpoints', token)).endpoints.length === 0, 'the endpoint is deleted');

  // Volumes: created from the form; a snapshot of a volume no pod has used is refused with the
  // server's reason; deleted. (tests/volume_move_process_test.cc makes and restores real ones.)
  await page.click('nav a[href="#/volumes"]');
  await page.waitForSelector('text=No volumes yet');
  check(await page.isVisible('text=No snapshots yet'), 'no snapshots yet, and the page says what one is');
  await page.fill('#volume-name', 'notes');
  await page.fill('#volume-size', '2');
  await page.click('form.inline button[type=submit]');
  await page.waitForSelector('table.volumes >> text=notes');
  check((await apiGet('/v1/volumes', token)).volumes.some((v) => v.name === 'notes' && v.size_gb === 2), 'the volume is created');
  await page.click('table.volumes button:has-text("Snapshot")');
  await page.waitForSelector('.error');
  check(/holds no data yet/.test(await page.textContent('.error')), 'a snapshot of an unused volume is refused with the reason');
  await shot('volumes');
  await checkWidths('the volumes page');
  await noteDangerButton("a volume's delete", 'table.volumes button:has-text("Delete")');
  // A volume on the shared backend: this cloud's agent has none, and the refusal says how to get one.
  await page.fill('#volume-name', 'team');
  await page.fill('#volume-size', '1');
  await page.check('#volume-shared');
  await page.click('form.inline button[type=submit]');
  await page.waitForSelector('.error >> text=/--shared-volumes/');
  check(!(await apiGet('/v1/volumes', token)).volumes.some((v) => v.name === 'team'), 'no shared volume is made without a node that has the backend');
  await page.uncheck('#volume-shared');
  await page.click('table.volumes button:has-text("Delete")');
  await page.waitForSelector('text=No volumes yet');
  check((await apiGet('/v1/volumes', token)).volumes.length === 0, 'the volume is deleted');

  // Projects: make one, switch to it in the bar, and the pods list and Deploy work in it.
  await page.click('nav a[href="#/projects"]');
  await page.waitForSelector('#project-name');
  await page.fill('#project-name', 'console-team');
  await page.click('text=Create project');
  await page.waitForSelector('table.projects >> text=console-team');
  check((await page.textContent('table.projects')).includes('you (owner)'), 'the new project lists its owner');
  const team = (await apiGet('/v1/projects', token)).projects.find((p) => p.name === 'console-team');
  check(team && team.members.length === 1, 'the project is made, with its owner as its one member');
  // A member added by name is shown by name (the API says it), not by a usr_ id.
  await page.fill('input[aria-label="user to add to console-team"]', 'poor');
  await page.click('table.projects button:has-text("Add")');
  await page.waitForSelector('table.projects >> text=/\\(member\\)/');
  const members = await page.textContent('table.projects tbody td:nth-child(2)');
  check(members === 'you (owner), poor (member)' && !members.includes('usr_'), `members are shown by name: ${members}`);
  // Its own limits, set by its owner on the same page.
  await page.fill('#limits-cap', '5');
  await page.fill('#limits-monthly', '100');
  await page.selectOption('#limits-action', 'stop_all');
  await page.click('text=Set limits');
  await page.waitForSelector('table.projects >> text=cap $5.00/h');
  const limited = (await apiGet('/v1/projects', token)).projects.find((p) => p.name === 'console-team');
  check(limited.spend_cap_per_hour_micros === 5000000 && limited.monthly_budget_micros === 100000000 &&
        limited.budget_action === 'stop_all', `the project's limits are set: ${JSON.stringify(limited)}`);
  await page.selectOption('#project-switcher', {label: 'Project console-team'});
  await page.click('nav a[href="#/pods"]');
  await page.waitForSelector('text=No pods in project console-team yet');
  check(!(await page.isVisible(`a[href="#/pods/${podId}"]`)), "the renter's own pod is not listed in the project");
  await page.click('nav a[href="#/deploy"]');
  await page.waitForSelector('#deploy-project');
  check((await page.textContent('#deploy-project')).includes('console-team'), 'Deploy says which project it deploys into');
  await shot('projects');
  await page.click('nav a[href="#/projects"]');
  await page.waitForSelector('table.projects >> text=console-team');
  await checkWidths('the projects page');
  await noteDangerButton("a project's delete", 'table.projects button:has-text("Delete")');
  // Its volumes: made on the Volumes page while the project is chosen, listed there only.
  await page.click('nav a[href="#/volumes"]');
  await page.waitForSelector('#volumes-project');
  await page.fill('#volume-name', 'team-data');
  await page.fill('#volume-size', '1');
  await page.click('text=Create volume');
  await page.waitForSelector('table.volumes >> text=team-data');
  const teamVolume = (await apiGet('/v1/volumes', token)).volumes.find((v) => v.name === 'team-data');
  check(teamVolume && teamVolume.project_id === team.id, `the volume is the project's (${teamVolume && teamVolume.project_id})`);
  check((await page.$$('table.volumes tbody tr')).length === 1, "the project's Volumes page lists its volumes only");
  await page.click('table.volumes button:has-text("Delete")');
  await page.waitForSelector('text=No volumes in project console-team yet');
  check(!(await apiGet('/v1/volumes', token)).volumes.some((v) => v.name === 'team-data'), "the project's volume is deleted");
  await page.selectOption('#project-switcher', '');
  await page.click('nav a[href="#/projects"]');
  await page.click('table.projects button:has-text("Delete")');
  await page.waitForSelector('text=No projects yet');
  check((await apiGet('/v1/projects', token)).projects.length === 0, 'the project is deleted');

  // A phone's width, then sign out.
  await page.setViewportSize({width: 390, height: 844});
  await page.click('nav a[href="#/gpus"]');
  await page.waitForSelector('table.gpus');
  await page.screenshot({path: `${shots}/gpus-phone.png`});
  await page.click('#sign-out');
  await page.waitForSelector('#token');
  check(await page.evaluate(() => localStorage.getItem('suanli.token')) === null, 'sign-out forgets the token');

  // A project's pod (three GPUs: it waits, queued, for a node that has them), for the admin's list.
  const shared = await apiPost('/v1/projects', token, {name: 'shared'});
  const sharedPod = await apiPost('/v1/pods', token, {template: 'demo-http', gpu_type: 'RTX 4090', gpu_count: 3,
                                                       project: 'shared', queue: true});
  check(sharedPod.project_id === shared.id, `a project's pod is made (${sharedPod.id || JSON.stringify(sharedPod)})`);

  // Admin: the node and its simulated GPUs, a join token, credit for a user, a price.
  await page.setViewportSize({width: 1280, height: 900});
  await signIn(adminToken);
  await page.waitForSelector('table.gpus');
  // The admin's pods list: everyone's pods, each with its owner.
  await page.click('nav a[href="#/pods"]');
  await page.waitForSelector(`table.pods a[href="#/pods/${podId}"]`);
  check(await page.isVisible('table.pods th:text-is("Owner")') &&
        (await page.textContent(`table.pods tr:has(a[href="#/pods/${podId}"])`)).includes('renter'),
        "the admin's pods list names each pod's owner");
  await page.waitForSelector(`table.pods a[href="#/pods/${sharedPod.id}"]`, {timeout: 5000}).catch(() => {});
  check(await page.isVisible(`table.pods a[href="#/pods/${sharedPod.id}"]`) &&
        (await page.textContent(`table.pods tr:has(a[href="#/pods/${sharedPod.id}"])`)).includes('shared'),
        "the admin's pods list has the project's pods too, with their project");
  await checkWidths("the admin's pods list");
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
  await checkWidths('the admin page');
  await noteDangerButton("a node's drain", 'table.nodes button:has-text("drain")');
  check(dangerButtons.length === 5 && dangerButtons.every((b) => b.className === 'danger' &&
          b.background === dangerButtons[0].background) && /^rgb\((\d+), (\d+), (\d+)\)$/.test(dangerButtons[0].background) &&
        (([, r, g, b]) => +r > 2 * +g && +r > 2 * +b)(dangerButtons[0].background.match(/(\d+), (\d+), (\d+)/)),
        `destructive buttons share one class and one red: ${dangerButtons.map((b) => `${b.what} ${b.className || 'no class'} ${b.background}`).join('; ')}`);
  await page.click('nav a[href="#/gpus"]');
  await page.waitForSelector('table.gpus');
  const row = await page.textContent('table.gpus tbody tr:has-text("RTX 4090 ")');
  check(row.includes('$0.50'), `the new price shows on the GPUs page (${row.replace(/\s+/g, ' ').trim()})`);
  // A new user without the CLI: the admin creates them, they sign in with the token shown once.
  await page.click('nav a[href="#/admin"]');
  await page.waitForSelector('#new-user-name');
  await page.fill('#new-user-name', 'newcomer');
  await page.fill('#new-user-credits', '3');
  await page.click('form.inline button:has-text("Create user")');
  await page.waitForSelector('#new-user-token');
  const newcomer = (await page.textContent('#new-user-token')).trim();
  check(newcomer.startsWith('sl_') && await page.isVisible('table.users >> text=newcomer'), 'the admin creates a user and sees their token once');
  await page.click('#sign-out');
  await signIn(newcomer);
  await page.waitForSelector('table.gpus');
  await page.click('nav a[href="#/billing"]');
  await page.waitForSelector('#balance');
  check(await page.textContent('#balance') === '$3.00', 'the new user signs in with it and has their $3.00');
  check(pageErrors.length === 0, `no script errors${pageErrors.length ? ': ' + pageErrors.join('; ') : ''}`);
} catch (error) {
  check(false, error.message.split('\n')[0]);
  await page.screenshot({path: `${shots}/failure.png`, fullPage: true}).catch(() => {});
} finally {
  await browser.close();
}
console.log(failures === 0 ? 'console end to end: passed' : `console end to end: ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
