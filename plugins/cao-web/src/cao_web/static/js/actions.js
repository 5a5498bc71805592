// Stopping things, shared by the pages that offer it: always after a confirmation.

import { api, enc } from './api.js';
import { confirmAction } from './confirm.js';
import { team } from './team.js';

/** Stop one terminal (its agent and everything it runs). Resolves true when it was stopped. */
export async function stopTerminal(id) {
  const question = `Stop ${team.label(id)}? Its agent and everything running in its terminal end.`;
  if (!(await confirmAction(question, 'Stop terminal'))) return false;
  await api.del(`/terminals/${enc(id)}`);
  return true;
}

/** Stop a whole session. Resolves true when it was stopped. */
export async function stopSession(name) {
  const count = [...team.terminals.values()].filter((t) => t.session_name === name).length;
  const question = `Stop session ${name} and its ${count} terminal${count === 1 ? '' : 's'}?`;
  if (!(await confirmAction(question, 'Stop session'))) return false;
  await api.del(`/sessions/${enc(name)}`);
  return true;
}
