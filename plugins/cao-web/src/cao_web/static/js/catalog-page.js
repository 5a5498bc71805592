// Profiles and plugins: what `cao profile list` and `cao plugins` show, for the server's own kernel.

import { api } from './api.js';
import { fill, h } from './dom.js';
import { problem } from './page.js';

function table(caption, columns, rows) {
  return h('table', { class: 'catalog' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, columns.map(([name]) => h('th', { scope: 'col' }, name)))),
    h('tbody', {}, rows.map((row) => h('tr', {}, columns.map(([, cell]) => h('td', {}, cell(row) ?? ''))))));
}

function section(id, title, content) {
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), content);
}

export function mount(root) {
  document.title = 'Profiles and plugins · cao console';
  const note = h('p', { class: 'note', role: 'alert' });
  const profiles = h('div', {}, h('p', { class: 'dim' }, 'Reading\u2026'));
  const providers = h('div');
  const plugins = h('div');
  root.append(h('h1', {}, 'Profiles and plugins'), note,
    section('profiles-title', 'Agent profiles', profiles),
    section('providers-title', 'Providers', providers),
    section('plugins-title', 'Plugins', plugins));

  api.get('/agents/profiles').then((rows) => fill(profiles, table('Installed agent profiles', [
    ['Name', (p) => p.name],
    ['Description', (p) => p.description],
    ['Provider', (p) => p.provider || 'default'],
    ['Source', (p) => p.source],
  ], rows)), (error) => problem(note, error));
  api.get('/agents/providers').then((rows) => fill(providers, table('Providers (agent CLIs)', [
    ['Name', (p) => p.name],
    ['Program', (p) => p.binary],
    ['Installed', (p) => (p.installed ? 'yes' : `no \u2014 ${p.install_hint || ''}`)],
    ['Description', (p) => p.description],
  ], rows)), (error) => problem(note, error));
  api.get('/plugins').then((rows) => fill(plugins, table('Plugins of the server', [
    ['Name', (p) => p.name],
    ['Distribution', (p) => p.distribution],
    ['Version', (p) => p.version],
    ['Status', (p) => h('span', { class: `badge plugin-${p.status}` }, p.status)],
    ['Error', (p) => p.error],
  ], rows)), (error) => problem(note, error));
  return () => {};
}
