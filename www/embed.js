/*
 * embed.js - /embed, the hidden page a webmail frames to set up this
 * browser right after its own login:
 *
 *   <iframe src="https://id.example.com/embed?origin=https://mail.example.com" hidden></iframe>
 *   frame.contentWindow.postMessage({type: "vep:provision", email, password},
 *                                   "https://id.example.com");
 *   // answer: {type: "vep:provisioned", email, expires} or {type: "vep:error", error, status}
 *
 * The password is optional: without it the page uses the authority session
 * the browser already has. Messages are only taken from, and answers only
 * sent to, ?origin=, which must be one of the webmails the authority is
 * configured to trust (embed_origins). The server writes that list into
 * the page (meta vep-embed-origins) and into the Content-Security-Policy's
 * frame-ancestors, so the page and the browser enforce the same list; no
 * origin is ever guessed from host names.
 */
(() => {
  'use strict';

  const meta = document.querySelector('meta[name=vep-embed-origins]');
  const allowed = meta ? meta.content.split(' ').filter(Boolean) : [];
  const parentOrigin = new URLSearchParams(location.search).get('origin') || '';
  if (window.parent === window) return;
  if (!allowed.includes(parentOrigin)) {
    /* For the webmail's developer; nothing is sent to the framing page. */
    console.error('vep /embed: ' + JSON.stringify(parentOrigin) +
      ' is not among the authority\'s embed_origins');
    return;
  }

  const answer = (msg) => { window.parent.postMessage(msg, parentOrigin); };

  window.addEventListener('message', async (ev) => {
    if (ev.origin !== parentOrigin || ev.source !== window.parent || !ev.data ||
        ev.data.type !== 'vep:provision') return;
    const d = ev.data;
    let id;
    try {
      if (typeof d.password === 'string' && d.password !== '') {
        await window.vep.signIn(String(d.email || ''), d.password);
      }
      id = await window.vep.provision();
    } catch (err) {
      answer({ type: 'vep:error', error: err.message, status: err.status || 0 });
      return;
    }
    answer({ type: 'vep:provisioned', email: id.email, expires: id.expires });
  });
  answer({ type: 'vep:ready' });
})();
