// A modal question before anything that stops an agent: a <dialog> (keyboard and screen readers handle
// it; Escape cancels), never window.confirm, which blocks the page and its event stream.

import { h } from './dom.js';

let count = 0;

/** Resolves true when the person chooses `action`, false on Cancel or Escape. */
export function confirmAction(question, action) {
  return new Promise((resolve) => {
    const id = `confirm-${++count}`;
    const cancel = h('button', { type: 'button', onclick: () => dialog.close('cancel') }, 'Cancel');
    const go = h('button', { type: 'button', class: 'danger', onclick: () => dialog.close('confirm') },
      action);
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': id },
      h('p', { id }, question),
      h('div', { class: 'actions' }, cancel, go));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
