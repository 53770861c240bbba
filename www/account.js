/* account.js - the /account page: who you are, this browser's certificate,
 * sign out. */
(() => {
  'use strict';
  const { $, message, time, setBusy } = window.vepUI;

  function show(id) {
    for (const x of ['loading', 'signed-in', 'signed-out']) $(x).hidden = x !== id;
  }

  function render(s, ident) {
    $('email').textContent = s.email;
    $('session').textContent = 'ends ' + time(s.expires) + ' if unused';
    $('cert').textContent = ident
      ? 'certified until ' + time(ident.expires) + ' (renewed automatically)'
      : 'no certificate yet';
    show('signed-in');
  }

  async function refresh() {
    let s;
    try {
      s = await window.vep.session();
    } catch (err) {
      show('signed-out');
      $('signed-out-text').textContent = message(err);
      return;
    }
    if (!s) { show('signed-out'); return; }
    // Make sure this browser holds a valid certificate (renews if due).
    let ident;
    try {
      ident = await window.vep.provision();
    } catch (err) {
      render(s, null);
      $('error').textContent = message(err);
      return;
    }
    render(s, ident);
  }

  document.addEventListener('DOMContentLoaded', () => {
    const b = $('signout');
    b.addEventListener('click', async () => {
      setBusy(b, true, 'Signing out…');
      try {
        await window.vep.signOut();
      } catch (err) {
        setBusy(b, false);
        $('error').textContent = message(err);
        return;
      }
      setBusy(b, false);
      $('signed-out-text').textContent = 'You have signed out. This browser no longer holds a key for your address.';
      show('signed-out');
    });
    refresh();
  });
})();
