// The import progress page with JavaScript: instead of the <noscript> meta refresh (a reload every 2
// seconds sends a screen reader back to the top of the page), the page fetches itself every 2 seconds
// and updates its progress in place; its role="status" paragraph says how far the import has come, in
// steps of 10 % (not every 2 seconds). Once the import has ended, the page's content becomes the ended
// page's and its notice is announced. A file, not an inline script: the page's CSP is script-src 'self'.
(() => {
  const status = document.getElementById('import-status');
  const url = status?.dataset.poll;
  if (!status || !url) return;
  const EVERY_MS = 2000;
  const intro = status.querySelector('[data-intro]');
  if (intro)
    intro.textContent =
      'This page updates itself while the import runs. You can leave it: the import goes on.';
  // What is announced: the progress, which the bar's label above already shows to the eye.
  const said = document.createElement('span');
  said.className = 'sr-only';
  status.prepend(said);
  let lastStep = -1;

  // The card's parts but its refresh note, each replaced only when it changed (a focused link that did
  // not change keeps the focus); a card whose parts are not the same kinds any more is replaced whole.
  function update(doc) {
    const card = status.closest('section');
    const next = doc.querySelector('section[data-active]');
    if (!card || !next) return;
    const parts = (el) => [...el.children].filter((c) => !c.hasAttribute('data-refresh-note'));
    const kind = (el) => `${el.tagName}#${el.id}.${el.className}`;
    const now = parts(card);
    const then = parts(next);
    if (now.length === then.length && now.every((el, i) => kind(el) === kind(then[i]))) {
      now.forEach((el, i) => {
        if (el.outerHTML !== then[i].outerHTML) el.replaceWith(document.adoptNode(then[i]));
      });
    } else {
      const at = [...next.children].findIndex((c) => c.hasAttribute('data-refresh-note'));
      const kids = [...next.children].map((c) => document.adoptNode(c));
      const before = at < 0 ? kids : kids.slice(0, at);
      const after = at < 0 ? [] : kids.slice(at + 1);
      card.replaceChildren(...before, status, ...after);
    }
    say();
  }

  function say() {
    const label = document.querySelector('label[for="progress"]')?.textContent;
    const step = Math.floor(Number(document.getElementById('progress')?.getAttribute('value') ?? 0) / 10);
    if (label && step !== lastStep) {
      lastStep = step;
      said.textContent = `${label}. `;
    }
  }

  function ended(doc) {
    const main = document.querySelector('main');
    const next = doc.querySelector('main');
    if (!main || !next) return location.reload();
    document.title = doc.title;
    main.replaceChildren(...[...next.childNodes].map((n) => document.adoptNode(n)));
    // A live region inserted with its text is not announced by every screen reader: its text is put
    // back once the region is in the page.
    for (const region of main.querySelectorAll('[role="status"], [role="alert"]')) {
      const text = region.innerHTML;
      region.innerHTML = '';
      requestAnimationFrame(() => {
        region.innerHTML = text;
      });
    }
  }

  async function poll() {
    let doc;
    try {
      const res = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
      if (!res.ok || res.redirected) return location.reload();
      doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    } catch {
      // Offline for a moment: try again at the next turn.
      return setTimeout(poll, EVERY_MS);
    }
    if (!doc.getElementById('job-title')) return location.reload();
    if (doc.querySelector('[data-active]')) {
      update(doc);
      return setTimeout(poll, EVERY_MS);
    }
    ended(doc);
  }
  say();
  setTimeout(poll, EVERY_MS);
})();
