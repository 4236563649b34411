// Sign-in: exchanges an API key for a cookie session (POST /auth/login).

import * as api from '../api.js';
import { h, fill, errorBox } from '../dom.js';
import { signedIn } from '../app.js';

export function signinPage(main, { query, navigate, setTitle }) {
  setTitle('Sign in');
  const problem = h('div', { id: 'signin-error', 'aria-live': 'polite' });
  const key = h('input', { id: 'api-key', name: 'api_key', type: 'password', autocomplete: 'current-password', required: true, placeholder: 'orch_admin_…' });
  const keep = h('input', { id: 'persistent', type: 'checkbox', checked: true });
  const button = h('button', { type: 'submit', id: 'signin' }, 'Sign in');
  const form = h('form', { class: 'signin card', onsubmit: async (event) => {
    event.preventDefault();
    button.disabled = true;
    fill(problem);
    try {
      await api.signIn(key.value.trim(), keep.checked);
      signedIn(await api.me());
      const next = query.get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/ui/signin') ? next : '/ui/workflows', { replace: true });
    } catch (e) {
      fill(problem, errorBox(e));
      button.disabled = false;
      key.select();
    }
  } },
  h('h1', {}, 'Sign in to orch'),
  query.get('expired') ? h('p', { class: 'notice' }, 'Your session ended. Sign in again to continue.') : null,
  h('label', { for: 'api-key' }, 'API key'),
  key,
  h('label', { class: 'check' }, keep, ' Keep me signed in on this browser'),
  problem,
  button,
  h('p', { class: 'muted small' }, 'Use the admin key orch serve printed on its first start, or any key from ', h('code', {}, 'orch api-keys create'), '.'));
  fill(main, h('div', { class: 'center' }, form));
  key.focus();
}
