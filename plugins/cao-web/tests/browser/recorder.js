// Injected by the browser tests: notes every terminal row the Team page shows, every status it shows
// it in, and every row it removes, as the page changes (the test asserts what a person saw, in order).
() => {
  const seen = [];
  window.__seen = seen;
  const note = (li, removed = false) => {
    const parent = li.parentElement ? li.parentElement.closest('li.terminal') : null;
    const who = li.querySelector('.who strong');
    seen.push({
      id: li.dataset.terminalId,
      status: li.dataset.status,
      parent: parent ? parent.dataset.terminalId : null,
      profile: who ? who.textContent : null,
      removed,
    });
  };
  const rows = (node) => (node.nodeType === 1
    ? [...(node.matches('li.terminal') ? [node] : []), ...node.querySelectorAll('li.terminal')] : []);
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === 'attributes' && record.target.matches('li.terminal')) note(record.target);
      for (const node of record.addedNodes) rows(node).forEach((li) => note(li));
      for (const node of record.removedNodes) {
        if (!node.isConnected) rows(node).forEach((li) => note(li, true));
      }
    }
  }).observe(document.getElementById('app'),
    { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
}
