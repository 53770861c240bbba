/* The test user agent's dialog: frames the IdP's provisioning page (?idp=
 * its URL, #email=...&duration=...) and leaves the outcome in
 * window.result. */
window.result = null;
window.addEventListener('message', function (ev) {
  var q = new URLSearchParams(location.hash.slice(1));
  var frame = document.querySelector('iframe');
  if (!frame || ev.source !== frame.contentWindow) return;
  if (ev.data.type === 'ready') {
    frame.contentWindow.postMessage({ type: 'begin', email: q.get('email'),
      duration: Number(q.get('duration')) }, '*');
  } else {
    window.result = ev.data;
  }
});
document.addEventListener('DOMContentLoaded', function () {
  var f = document.createElement('iframe');
  f.src = new URLSearchParams(location.search).get('idp');
  document.body.appendChild(f);
});
