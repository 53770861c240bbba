/*
 * test_second_factor.js - sign-in that takes more than the password, in
 * real Chromium against the real vep-authority --demo whose PAM stack asks
 * a TOTP code after the password (pam_matrix, then pam_echo's note, then
 * Debian's pam_oath; common.js oathStack, codes from oathtool):
 *   - /sign-in: the password gives way to the code step in the same form
 *     (PAM's question as the label, a password-type input for the code,
 *     autocomplete one-time-code, focus on it, PAM's note shown as text,
 *     "Continue"), at 375 and 1280 px; a wrong code reads exactly as a
 *     wrong password and goes back to the start, the address kept; a
 *     continuation the server no longer knows goes back with its text;
 *     the right code signs in, provisions a certificate, and the demo
 *     website signs in through the popup without asking anything;
 *   - /share: the popup's sign-in step takes the code step too;
 *   - /sign-in/authenticate (no shim): the same;
 *   - /embed: the demo webmail gets "vep:challenge" (never the
 *     continuation), answers "vep:answer" with the code, the browser is
 *     provisioned and the demo website signs in; a wrong code is a
 *     vep:error 401 like a wrong password;
 *   - with tests/pam's test module after pam_oath: a second question
 *     (visible answer, PAM's error note), and an expired password (403,
 *     after the code and right after the password) shown in the server's
 *     words, never as a wrong password.
 */
'use strict';
const c = require('./common.js');

const ALICE = 'alice@example.test';
const PROMPT = /^One-time password \(OATH\) for `alice':\s*$/;

/* The sign-in form's state, read in the page. */
function formState(page, formSel) {
  return page.evaluate((sel) => {
    const f = document.querySelector(sel);
    const step = f.querySelector('.code-step');
    const input = step && step.querySelector('input');
    const label = step && step.querySelector('label');
    const shown = (el) => !!el && !el.closest('[hidden]') && el.getClientRects().length > 0;
    return {
      codeShown: shown(step),
      emailShown: shown(f.querySelector('input[type=email]')),
      passwordShown: shown(f.querySelector('#password')),
      email: f.querySelector('input[type=email]').value,
      password: f.querySelector('#password').value,
      label: label ? label.textContent : null,
      labelFor: label ? label.htmlFor : null,
      inputId: input ? input.id : null,
      inputType: input ? input.type : null,
      autocomplete: input ? input.getAttribute('autocomplete') : null,
      inputmode: input ? input.getAttribute('inputmode') : null,
      notes: step ? [...step.querySelectorAll('.note')].map((n) => ({ cls: n.className,
        text: n.textContent, html: n.innerHTML })) : [],
      hint: step ? (step.querySelector('.hint') || {}).textContent : null,
      focused: document.activeElement && document.activeElement.id,
      button: f.querySelector('button[type=submit]').textContent,
      busy: f.querySelector('button[type=submit]').disabled,
      alert: f.querySelector('.alert.error').textContent,
      alertRole: f.querySelector('.alert.error').getAttribute('role'),
      invalid: [...f.querySelectorAll('[aria-invalid=true]')].map((i) => i.id),
    };
  }, formSel);
}

async function submitPassword(page, formSel, password) {
  await page.fill(`${formSel} #password`, password);
  await page.click(`${formSel} button[type=submit]`);
}

/* Waits until the form is not busy and shows the code step or an error. */
async function settled(page, formSel) {
  await page.waitForFunction((sel) => {
    const f = document.querySelector(sel);
    const b = f.querySelector('button[type=submit]');
    const step = f.querySelector('.code-step');
    return !b.disabled && ((step && !step.hidden) || f.querySelector('.alert.error').textContent);
  }, formSel, { timeout: 30000 });
  return formState(page, formSel);
}

/* Password, then the code step: checked in full when label is given. */
async function toCodeStep(t, page, formSel, oath, label) {
  await submitPassword(page, formSel, 'wonderland');
  const s = await settled(page, formSel);
  if (!label) {
    t.check(s.codeShown, `code step after the password (${s.alert})`);
    return s;
  }
  t.check(s.codeShown && !s.emailShown && !s.passwordShown,
    `${label}: the password gives way to the code step (${s.alert})`);
  t.check(PROMPT.test(s.label || ''), `${label}: PAM's question is the label (${s.label})`);
  t.check(s.labelFor === s.inputId && s.inputId && s.focused === s.inputId,
    `${label}: label for= the input, which has the focus (${s.labelFor} ${s.inputId} ${s.focused})`);
  t.check(s.inputType === 'password' && s.autocomplete === 'one-time-code' && s.inputmode === null,
    `${label}: a secret answer: password input, autocomplete one-time-code (${s.inputType} ${s.autocomplete})`);
  t.check(s.notes.length === 1 && s.notes[0].cls === 'note info' && s.notes[0].text === oath.note &&
    !s.notes[0].html.includes('<b>'), `${label}: PAM's note shown as text (${JSON.stringify(s.notes)})`);
  t.check(s.button === 'Continue' && s.password === '' && s.alert === '',
    `${label}: "Continue", the password no longer in the page (${s.button})`);
  t.check(/^Answer within \d+ (minutes|seconds)\.$/.test(s.hint || ''), `${label}: the time left (${s.hint})`);
  return s;
}

async function answerCode(page, formSel, answer) {
  const id = (await formState(page, formSel)).inputId;
  await page.fill('#' + id, answer);
  await page.click(`${formSel} button[type=submit]`);
}

async function backAtStart(t, page, label, want) {
  const s = await settled(page, '#signin');
  t.check(s.alert === want && s.alertRole === 'alert', `${label}: "${want}" in the alert (${s.alert})`);
  t.check(!s.codeShown && s.emailShown && s.passwordShown && s.email === ALICE && s.password === '' &&
    s.focused === 'password' && s.button === 'Sign in',
  `${label}: back at the password, the address kept (${JSON.stringify(s)})`);
  return s;
}

async function signInPage(t, page, oath) {
  await page.goto(c.origin + '/sign-in');
  await page.fill('#email', ALICE);
  await toCodeStep(t, page, '#signin', oath, 'sign-in');
  await c.shots(page, 'sign-in-code');
  t.check(await c.fitsNarrow(page), 'sign-in: the code step fits 375 px');

  // A wrong code: exactly a wrong password, back at the start.
  await answerCode(page, '#signin', oath.wrong());
  const s = await backAtStart(t, page, 'wrong code', 'Wrong email address or password.');
  t.check(s.invalid.includes('email') && s.invalid.includes('password'),
    `wrong code: the fields marked as for a wrong password (${s.invalid})`);
  await c.shots(page, 'sign-in-code-wrong');

  // A continuation the server does not know (as after it timed out): the
  // real server's answer, the request's continuation replaced on its way.
  await page.route('**/api/login/continue', (route) => {
    const body = JSON.parse(route.request().postData());
    body.continuation = 'A'.repeat(43);
    route.continue({ postData: JSON.stringify(body) });
  });
  await toCodeStep(t, page, '#signin', oath);
  await answerCode(page, '#signin', '123456');
  await backAtStart(t, page, 'unknown continuation', 'This sign-in has timed out. Start again.');
  await page.unroute('**/api/login/continue');

  // Start over, by its button.
  await toCodeStep(t, page, '#signin', oath);
  await page.click('#signin .code-step button.link');
  const back = await formState(page, '#signin');
  t.check(!back.codeShown && back.passwordShown && back.email === ALICE && back.focused === 'password',
    '"Start over": back at the password, the address kept');

  // The right code.
  await toCodeStep(t, page, '#signin', oath);
  await answerCode(page, '#signin', oath.code());
  await page.waitForURL('**/account', { timeout: 30000 });
  await page.waitForSelector('#signed-in:not([hidden])', { timeout: 30000 });
  t.check(await page.textContent('#email') === ALICE, 'right code: signed in, /account says who');
  t.check((await page.textContent('#cert')).startsWith('certified until'),
    'right code: this browser holds a certificate');
  const id = await page.evaluate(() => window.vep.identity());
  t.check(id && id.email === ALICE && id.expires > Date.now(), 'right code: the certificate is in IndexedDB');
}

/* The demo website through the popup; signInWith: the popup asks the
 * password and the code first. Returns the assertion. */
async function rpJourney(t, ctx, label, oath, signInWith) {
  const log = [];
  const rp = c.watch(await ctx.newPage(), log);
  await rp.goto(c.rpOrigin + '/');
  const [popup] = await Promise.all([rp.waitForEvent('popup'), rp.click('#go')]);
  c.watch(popup, log);
  if (signInWith) {
    await popup.waitForSelector('#signin-step:not([hidden])', { timeout: 30000 });
    await toCodeStep(t, popup, '#signin', oath, label);
    await c.shots(popup, 'share-code');
    t.check(await c.fitsNarrow(popup), `${label}: the code step fits 375 px`);
    await answerCode(popup, '#signin', oath.code());
  }
  await popup.waitForSelector('#confirm-step:not([hidden])', { timeout: 30000 });
  await popup.click('#share');
  await rp.waitForSelector('#signed-in:not([hidden])', { timeout: 30000 });
  t.check(await rp.textContent('#who') === ALICE,
    `${label}: the demo website signed in (its server verified the assertion)`);
  const assertion = await rp.evaluate(() => window.lastAssertion);
  t.check(log.length === 0, `${label}: no script errors or CSP violations (${log.join('; ')})`);
  await rp.close();
  return assertion;
}

async function legacyAuthenticate(t, browser, oath) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const log = [];
  const page = c.watch(await ctx.newPage(), log);
  await page.goto(`${c.origin}/sign-in/authenticate?email=${encodeURIComponent(ALICE)}`);
  await toCodeStep(t, page, '#signin', oath, 'legacy authenticate');
  await answerCode(page, '#signin', oath.code());
  await page.waitForURL('**/account', { timeout: 30000 });
  t.check(page.url() === `${c.origin}/account`, 'legacy authenticate: the code signs in');
  t.check(log.length === 0, `legacy authenticate: no script errors or CSP violations (${log.join('; ')})`);
  await ctx.close();
}

/* More than one question, a visible answer, PAM's error note and an
 * expired password, with tests/pam's test module after pam_oath. */
async function morePam(t, browser, oath) {
  const mod = oath.testModule;
  t.check(mod !== null, `tests/pam's pam_vep_test.so is there (${process.env.VEP_PAM_TEST_MODULE})`);
  if (!mod) return;
  const fresh = async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(c.origin + '/sign-in');
    await page.fill('#email', ALICE);
    return { ctx, page };
  };

  // A second question after the code: visible answer, an error note.
  oath.stack({ more: [`auth required ${mod} [ask=echo:Your favourite colour?:blue] ` +
    '[error=Your password expires in 3 days.]'] });
  let { ctx, page } = await fresh();
  await toCodeStep(t, page, '#signin', oath);
  await answerCode(page, '#signin', oath.code());
  await page.waitForFunction(() => /colour/.test(document.querySelector('.code-step label').textContent) &&
    !document.querySelector('button[type=submit]').disabled, null, { timeout: 30000 });
  const s = await formState(page, '#signin');
  t.check(s.codeShown && s.label === 'Your favourite colour?' && s.inputType === 'text' &&
    s.focused === s.inputId && s.button === 'Continue' && s.alert === '',
  `second question: the next prompt, a visible (text) answer, focused (${JSON.stringify(s)})`);
  t.check(s.notes.length === 1 && s.notes[0].cls === 'note error' &&
    s.notes[0].text === 'Your password expires in 3 days.',
  `second question: PAM's error note, the first question's note gone (${JSON.stringify(s.notes)})`);
  await c.shots(page, 'sign-in-code-echo');
  t.check(await c.fitsNarrow(page), 'second question: fits 375 px');
  await answerCode(page, '#signin', 'blue');
  await page.waitForURL('**/account', { timeout: 30000 });
  t.check(page.url() === c.origin + '/account', 'second question answered: signed in');
  await ctx.close();

  // An expired password, after the code and right after the password:
  // the server's words, never "wrong password".
  const account = `account required ${mod} expired_user=alice`;
  for (const [label, withOath] of [['expired after the code', true], ['expired', false]]) {
    oath.stack({ oath: withOath, account });
    ({ ctx, page } = await fresh());
    const res = page.waitForResponse((r) => r.request().method() === 'POST' &&
      /\/api\/login/.test(r.url()) && r.status() === 403, { timeout: 30000 });
    if (withOath) {
      await toCodeStep(t, page, '#signin', oath);
      await answerCode(page, '#signin', oath.code());
    } else {
      await submitPassword(page, '#signin', 'wonderland');
    }
    const body = await (await res).json();
    const st = await settled(page, '#signin');
    t.check(body.reason === 'password_expired' && st.alert === body.error &&
      /^Your password has expired/.test(st.alert),
    `${label}: the server's text as is (${st.alert})`);
    t.check(!st.codeShown && st.passwordShown && st.email === ALICE && st.invalid.length === 0,
      `${label}: back at the password, nothing marked wrong (${st.invalid})`);
    if (withOath) await c.shots(page, 'sign-in-expired');
    await ctx.close();
  }
  oath.stack();
}

/* The demo webmail: records what /embed posts (window.got). */
async function webmailPage(ctx, log) {
  const page = c.watch(await ctx.newPage(), log);
  await page.addInitScript(() => {
    window.got = [];
    addEventListener('message', (ev) => { window.got.push(ev.data); });
  });
  await page.goto(c.rpOrigin + '/webmail');
  return page;
}

async function webmail(t, browser, oath) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const log = [];
  let page = await webmailPage(ctx, log);
  await page.fill('#password', 'wonderland');
  await page.click('#go');
  await page.waitForSelector('#code-step:not([hidden])', { timeout: 30000 });
  let got = await page.evaluate(() => window.got);
  const ch = got.find((m) => m && m.type === 'vep:challenge');
  t.check(ch && Object.keys(ch).sort().join() === 'echo,expiresIn,messages,prompt,type' &&
    PROMPT.test(ch.prompt) && ch.echo === false && ch.expiresIn > 0 &&
    ch.messages.length === 1 && ch.messages[0].kind === 'info' && ch.messages[0].text === oath.note,
  `embed: vep:challenge with PAM's question and note (${JSON.stringify(ch)})`);
  t.check(!JSON.stringify(got).includes('continuation'), 'embed: the continuation never leaves the frame');
  t.check(PROMPT.test(await page.textContent('#code-label')) &&
    await page.getAttribute('#code', 'type') === 'password' &&
    await page.evaluate(() => document.activeElement.id) === 'code',
  'embed: the webmail asks the question in its own form');
  await c.shots(page, 'webmail-code');

  // A wrong code: vep:error 401, like a wrong password.
  await page.fill('#code', oath.wrong());
  await page.click('#go');
  await page.waitForFunction(() => document.getElementById('error').textContent !== '', null,
    { timeout: 30000 });
  got = await page.evaluate(() => window.got);
  const err = got.find((m) => m && m.type === 'vep:error');
  t.check(err && err.status === 401 && err.reason === '' && err.error === 'wrong address or password',
    `embed: a wrong code is vep:error 401 like a wrong password (${JSON.stringify(err)})`);
  t.check(await page.textContent('#error') === 'Wrong email address or password.' &&
    await page.isVisible('#password'), 'embed: the webmail says so and asks the password again');
  await page.close();

  // The right code: provisioned.
  page = await webmailPage(ctx, log);
  await page.fill('#password', 'wonderland');
  await page.click('#go');
  await page.waitForSelector('#code-step:not([hidden])', { timeout: 30000 });
  await page.fill('#code', oath.code());
  await page.click('#go');
  await page.waitForSelector('#inbox:not([hidden])', { timeout: 30000 });
  t.check((await page.textContent('#status')).includes(ALICE), 'embed: the code answered, the browser is provisioned');
  got = await page.evaluate(() => window.got);
  t.check(got.map((m) => m.type).join() === 'vep:ready,vep:challenge,vep:provisioned',
    `embed: ready, challenge, provisioned (${got.map((m) => m.type)})`);
  t.check(log.length === 0, `embed: no script errors or CSP violations (${log.join('; ')})`);
  const a = await rpJourney(t, ctx, 'after webmail', oath, false);
  t.check(typeof a === 'string', 'after webmail: the demo website signs in without asking anything');
  await ctx.close();
}

(async () => {
  const t = c.interop.reporter();
  const d = await c.startDemo();
  Object.assign(c, { origin: d.origin, rpOrigin: d.rpOrigin, port: d.port });
  const oath = c.oathStack(d);
  const browser = await c.launch();
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const log = [];
    const page = c.watch(await ctx.newPage(), log);
    await signInPage(t, page, oath);
    const assertion = await rpJourney(t, ctx, 'demo website', oath, false);
    const moz = await c.interop.mozVerify(assertion, c.rpOrigin,
      { httpRequest: c.interop.localHttpRequest(c.port) });
    t.check(moz.ok && moz.email === ALICE,
      `demo website: Mozilla's browserid-local-verify accepts (${moz.err || moz.email})`);
    t.check(log.length === 0, `authority pages: no script errors or CSP violations (${log.join('; ')})`);
    await ctx.close();

    const fresh = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await rpJourney(t, fresh, 'share popup', oath, true);
    await fresh.close();
    await legacyAuthenticate(t, browser, oath);
    await webmail(t, browser, oath);
    await morePam(t, browser, oath);
  } finally {
    await browser.close();
    const st = await c.stopDemo(d);
    t.check(st.code === 0 && !st.sanitizer, `server: clean exit (${st.code})`);
    console.log('screenshots in ' + c.ARTIFACTS);
  }
  t.done();
})().catch((e) => { console.error(e); process.exit(1); });
