// A prompt an agent waits on, shown where its terminal is (a Team row, the Terminal page): the question,
// the tool and its arguments, one button per option (the default one marked), a text field for an
// option or a prompt that takes text. A click answers POST /terminals/{id}/answer naming the prompt's
// id, so an answer meant for one prompt is refused (409, nothing typed) once another is on screen or
// this one was answered elsewhere: the refusal is shown as the server words it.
//
// The view is patched, not redrawn, while the same prompt stays open: the status ticker and other
// events must not wipe text being typed into its field.

import { api, ApiError, enc } from './api.js';
import { clock, fill, h, visible } from './dom.js';
import { problem } from './page.js';

/** Who this page answers as, in the audit trail. */
export const BY = 'person:web';

// Prompt ids this page answered itself, so their news reads "you answered" rather than naming the page.
const mine = new Set();

/** The label of option `number` (from 1) of an OpenPrompt record, or ''. */
export function optionLabel(open, number) {
  const options = (open && open.prompt && open.prompt.options) || [];
  return number && number <= options.length ? options[number - 1].label : '';
}

/** An answer as a phrase: `2. Yes, and don't ask again` and/or the text typed. */
export function answerText(open, option, text) {
  const parts = [];
  if (option) parts.push(`${option}. ${optionLabel(open, option) || '?'}`);
  if (text !== null && text !== undefined) parts.push(`text \u201c${text}\u201d`);
  return parts.join(' with ');
}

/** The view of one terminal's prompt: `el` to place once, `update(terminal)` after each change. */
export function promptView(terminalId) {
  const card = h('div', { class: 'prompt-card', hidden: true });
  const news = h('p', { class: 'prompt-news', role: 'status' });
  const note = h('p', { class: 'note', role: 'alert' });
  const el = h('div', { class: 'prompt-slot', dataset: { terminalId } }, card, note, news);
  let shown = null; // id of the prompt drawn in the card
  let buttons = [];
  let shownNews = null;

  function draw(open) {
    const p = open.prompt;
    const field = { row: null }; // the text field open under an option, if any
    buttons = [];
    const answer = async (body, busy) => {
      for (const b of buttons) b.disabled = true;
      busy.textContent = 'answering\u2026';
      note.textContent = '';
      mine.add(open.id);
      try {
        await api.post(`/terminals/${enc(terminalId)}/answer`, { ...body, prompt_id: open.id, by: BY });
        busy.textContent = '';
      } catch (error) {
        mine.delete(open.id);
        busy.textContent = '';
        // A refusal is news to the person, not a fault of the page: said as the server says it.
        if (error instanceof ApiError && error.status === 409) {
          note.textContent = `Not answered: ${error.message}`;
        } else {
          problem(note, error);
        }
        for (const b of buttons) b.disabled = false;
      }
    };
    const busy = h('span', { class: 'dim', role: 'status' });
    const textRow = (label, send) => {
      const input = h('input', { type: 'text', class: 'prompt-text', 'aria-label': label, maxlength: 4000 });
      const go = h('button', { type: 'button', onclick: () => input.value.trim() && send(input.value) },
        'Send');
      input.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && input.value.trim()) send(input.value);
      });
      buttons.push(go);
      return { row: h('div', { class: 'prompt-field' }, input, go), input };
    };
    const options = p.options.map((option, i) => {
      const number = i + 1;
      const isDefault = number === p.default;
      const label = `${number}. ${visible(option.label)}`;
      const button = h('button', {
        type: 'button', class: isDefault ? 'prompt-option default' : 'prompt-option',
        title: option.description ? visible(option.description) : null,
        'aria-label': `${label}${isDefault ? ' (default)' : ''}${option.takes_text ? ' (takes text)' : ''}`,
        onclick: () => {
          if (!option.takes_text) {
            answer({ option: number }, busy);
            return;
          }
          // The option opens the agent's text field: the text goes with the option in one answer.
          if (field.row) field.row.remove();
          const made = textRow(`text for option ${number}`, (text) => answer({ option: number, text }, busy));
          field.row = made.row;
          optionList.after(made.row);
          made.input.focus();
        },
      }, label, isDefault ? h('span', { class: 'mark' }, ' default') : null,
      option.takes_text ? h('span', { class: 'mark' }, ' \u270e') : null);
      buttons.push(button);
      return button;
    });
    const optionList = h('div', { class: 'prompt-options', role: 'group', 'aria-label': 'options' }, options);
    const args = Object.entries(p.arguments || {});
    fill(card,
      h('div', { class: 'prompt-head' },
        h('strong', {}, p.kind === 'permission' ? 'Permission asked' : 'Prompt'),
        h('span', { class: 'dim' },
          ` ${open.id} \u00b7 ${p.kind.replaceAll('_', ' ')} \u00b7 since ${clock(open.opened_at)}`)),
      p.title ? h('div', { class: 'prompt-title' }, visible(p.title)) : null,
      h('div', { class: 'prompt-question' }, visible(p.question)),
      p.tool ? h('div', { class: 'prompt-tool' }, h('code', {}, visible(p.tool)),
        args.map(([name, value]) => h('div', { class: 'prompt-arg' },
          h('span', { class: 'dim' }, `${visible(name)}: `), h('code', {}, visible(value)))),
        p.arguments_complete === false ? h('span', { class: 'dim' }, ' (cut on screen)') : null) : null,
      options.length ? optionList : null,
      p.free_text ? textRow('answer text', (text) => answer({ text }, busy)).row : null,
      busy);
    card.dataset.promptId = open.id;
  }

  function showNews(event) {
    if (!event) {
      news.textContent = '';
      return;
    }
    const open = event.prompt;
    if (event.kind === 'escalated') {
      news.textContent = `Prompt ${open.id} was escalated${event.detail ? `: ${event.detail}` : ''}.`;
      return;
    }
    const who = mine.has(open.id) && event.by === BY ? 'You' : event.by || 'someone';
    news.textContent = `${who} answered prompt ${open.id} (${visible(open.prompt.question)}): `
      + `${visible(answerText(open, event.option, event.text))}.`;
  }

  function update(t) {
    const open = t ? t.prompt : null;
    if ((open ? open.id : null) !== shown) {
      shown = open ? open.id : null;
      if (open) {
        note.textContent = ''; // an old refusal is about an old prompt
        draw(open);
      }
      card.hidden = !open;
      if (!open) {
        card.replaceChildren();
        delete card.dataset.promptId;
      }
    }
    const newsEvent = t ? t.promptNews : null;
    if (newsEvent !== shownNews) {
      shownNews = newsEvent;
      showNews(newsEvent);
    }
    el.classList.toggle('open', Boolean(open));
  }

  return { el, update };
}
