// The account page: sign in or create an account, then the account's time zone and API keys.
// Plain DOM, no framework; it talks to the service's own /auth and keys routes with the session
// cookie (same origin), and never keeps a key once it has been shown.
(function () {
  'use strict';

  const body = document.body;
  const service = body.dataset.service;
  const keysPath = body.dataset.keysPath;
  // `authorize`: an OAuth authorize step (sign in, then the server-rendered consent), not the account page.
  const authorizing = body.dataset.mode === 'authorize';
  const authPath = '/auth/' + service;
  const $ = function (id) {
    return document.getElementById(id);
  };
  const status = $('status');

  /** Says something to everyone: visibly, and through the live region to screen readers. */
  function say(message, kind) {
    status.textContent = message;
    status.className = 'status' + (kind ? ' ' + kind : '');
  }

  /** A JSON request to the service; resolves to { status, body } and never rejects on HTTP errors. */
  function call(method, path, payload) {
    const init = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (payload !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(payload);
    }
    return fetch(path, init).then(function (res) {
      if (res.status === 204) return { status: 204, body: null };
      return res.json().then(
        function (json) {
          return { status: res.status, body: json };
        },
        function () {
          return { status: res.status, body: null };
        },
      );
    });
  }

  /** The message of either envelope: tasks/meetings { error: { message } }, clipboard { error }. */
  function errorText(res) {
    const error = res.body && res.body.error;
    if (typeof error === 'string') return error;
    if (error && error.details && error.details.length)
      return (
        error.message +
        ': ' +
        error.details
          .map(function (d) {
            return d.path.replace(/^\//, '') + ' ' + d.message;
          })
          .join('; ')
      );
    if (error && error.message) return error.message;
    return 'Something went wrong (HTTP ' + res.status + '). Please try again.';
  }

  function formatDate(iso) {
    if (!iso) return 'Never';
    const date = new Date(iso);
    return date.toLocaleString(undefined, {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: currentZone || undefined,
    });
  }

  let currentZone = '';

  function show(signedIn) {
    $('signed-out').hidden = signedIn;
    $('signed-in').hidden = !signedIn || authorizing;
    $('signout').hidden = !signedIn;
  }

  function showSignedOut(message) {
    show(false);
    $('new-key-box').hidden = true;
    $('new-key').textContent = '';
    // Nothing of the last person stays in the form (a shared computer).
    $('signin-form').reset();
    if (message) say(message);
    $('email').focus();
  }

  function loadAccount() {
    return call('GET', authPath + '/me').then(function (res) {
      if (res.status === 401) return showSignedOut();
      if (res.status !== 200) return say(errorText(res), 'error');
      show(true);
      $('account-email').textContent = res.body.email;
      $('timezone').value = res.body.timezone;
      currentZone = res.body.timezone;
      return loadKeys();
    });
  }

  function loadKeys() {
    return call('GET', keysPath).then(function (res) {
      if (res.status === 401) return showSignedOut('Your session has ended; please sign in again.');
      if (res.status !== 200) return say(errorText(res), 'error');
      renderKeys(
        res.body.items.filter(function (k) {
          return !k.revokedAt;
        }),
      );
      return loadApps();
    });
  }

  function loadApps() {
    return call('GET', authPath + '/apps').then(function (res) {
      if (res.status === 401) return showSignedOut('Your session has ended; please sign in again.');
      if (res.status !== 200) return say(errorText(res), 'error');
      renderApps(res.body.items);
      return loadConnections();
    });
  }

  function renderApps(apps) {
    const tbody = $('apps-body');
    tbody.textContent = '';
    apps.forEach(function (app) {
      const row = document.createElement('tr');
      cell(row, app.clientName);
      cell(row, app.scopes.join(', '), 'scopes');
      cell(row, formatDate(app.createdAt));
      cell(row, formatDate(app.lastUsedAt));
      const actions = cell(row, '', 'actions');
      const disconnect = button('Disconnect', 'danger', function () {
        confirmInPlace(
          actions,
          disconnect,
          app.id,
          'Disconnect ' + app.clientName + '? It loses access at once.',
          'Confirm disconnect',
          function () {
            return call('DELETE', authPath + '/apps/' + encodeURIComponent(app.id)).then(function (res) {
              if (res.status === 401) {
                showSignedOut('Your session has ended; please sign in again.');
                return true;
              }
              if (res.status !== 200 && res.status !== 404) {
                say(errorText(res), 'error');
                return false;
              }
              return loadApps().then(function () {
                say(app.clientName + ' disconnected.', 'ok');
                $('apps-title').focus();
                return true;
              });
            });
          },
        );
      });
      disconnect.setAttribute('aria-label', 'Disconnect ' + app.clientName);
      actions.appendChild(disconnect);
      tbody.appendChild(row);
    });
    $('apps-table').hidden = apps.length === 0;
    $('no-apps').hidden = apps.length !== 0;
  }

  // The services this account connects to (meetings: tasks), on a page that has the section.
  const connectionsPath = body.dataset.connectionsPath;
  const serviceName = function (name) {
    return name.charAt(0).toUpperCase() + name.slice(1);
  };

  function loadConnections() {
    if (!connectionsPath) return Promise.resolve();
    return call('GET', connectionsPath).then(function (res) {
      if (res.status === 401) return showSignedOut('Your session has ended; please sign in again.');
      if (res.status !== 200) return say(errorText(res), 'error');
      renderConnections(res.body);
    });
  }

  function renderConnections(connections) {
    const tbody = $('connections-body');
    tbody.textContent = '';
    Object.keys(connections).forEach(function (name) {
      const label = serviceName(name);
      const connection = connections[name];
      const row = document.createElement('tr');
      cell(row, label);
      cell(row, connection.connected ? 'Connected since ' + formatDate(connection.since) : 'Not connected');
      const actions = cell(row, '', 'actions');
      const path = connectionsPath + '/' + encodeURIComponent(name);
      // Connect goes through the other service's consent page and comes back here.
      const connect = button('Connect', '', function () {
        window.location.assign(path + '/start');
      });
      const disconnect = button('Disconnect', 'danger', function () {
        confirmInPlace(
          actions,
          disconnect,
          'connection-' + name,
          'Disconnect ' + label + '? Its access ends at once.',
          'Confirm disconnect',
          function () {
            return call('DELETE', path).then(function (res) {
              if (res.status === 401) {
                showSignedOut('Your session has ended; please sign in again.');
                return true;
              }
              if (res.status !== 200) {
                say(errorText(res), 'error');
                return false;
              }
              return loadConnections().then(function () {
                say(label + ' disconnected.', 'ok');
                $('connections-title').focus();
                return true;
              });
            });
          },
        );
      });
      const action = connection.connected ? disconnect : connect;
      action.setAttribute('aria-label', (connection.connected ? 'Disconnect ' : 'Connect ') + label);
      actions.appendChild(action);
      tbody.appendChild(row);
    });
  }

  // Back from another service's consent page: `?tasks=connected` or `?tasks=denied`.
  new URLSearchParams(window.location.search).forEach(function (outcome, name) {
    if (!connectionsPath) return;
    if (outcome === 'connected') say(serviceName(name) + ' connected.', 'ok');
    else if (outcome === 'denied') say(serviceName(name) + ' was not connected: the consent was declined.');
  });

  function cell(row, text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  function button(text, className, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    if (className) b.className = className;
    b.addEventListener('click', onClick);
    return b;
  }

  function renderKeys(keys) {
    const tbody = $('keys-body');
    tbody.textContent = '';
    keys.forEach(function (key) {
      const row = document.createElement('tr');
      const label = key.name || key.prefix + '…';
      cell(row, label);
      cell(row, key.scopes.join(', '), 'scopes');
      cell(row, formatDate(key.createdAt));
      cell(row, formatDate(key.lastUsedAt));
      const actions = cell(row, '', 'actions');
      const revoke = button('Revoke', 'danger', function () {
        confirmRevoke(actions, revoke, key, label);
      });
      revoke.setAttribute('aria-label', 'Revoke ' + label);
      actions.appendChild(revoke);
      tbody.appendChild(row);
    });
    $('keys-table').hidden = keys.length === 0;
    $('no-keys').hidden = keys.length !== 0;
  }

  /** Revoking asks once more, in place: "Confirm revoke" acts, "Cancel" puts the button back. */
  function confirmRevoke(actions, revoke, key, label) {
    confirmInPlace(
      actions,
      revoke,
      key.id,
      'Revoke ' + label + '? Programs using it will stop working.',
      'Confirm revoke',
      function () {
        return call('DELETE', keysPath + '/' + encodeURIComponent(key.id)).then(function (res) {
          if (res.status === 401) {
            showSignedOut('Your session has ended; please sign in again.');
            return true;
          }
          if (res.status !== 200 && res.status !== 404) {
            say(errorText(res), 'error');
            return false;
          }
          return loadKeys().then(function () {
            say('Key ' + label + ' revoked.', 'ok');
            $('key-name').focus();
            return true;
          });
        });
      },
    );
  }

  /**
   * A destructive button asks once more, in place: the confirm button runs `act` (a promise of
   * whether it is done; false puts the confirm button back in use), "Cancel" restores the button.
   */
  function confirmInPlace(actions, trigger, id, questionText, confirmLabel, act) {
    const box = document.createElement('span');
    box.className = 'confirm';
    const question = document.createElement('span');
    question.textContent = questionText;
    question.id = 'confirm-' + id;
    const yes = button(confirmLabel, 'danger', function () {
      yes.disabled = true;
      act().then(function (done) {
        if (!done) yes.disabled = false;
      });
    });
    yes.setAttribute('aria-describedby', question.id);
    const no = button('Cancel', 'quiet', function () {
      actions.replaceChild(trigger, box);
      trigger.focus();
    });
    box.appendChild(question);
    box.appendChild(yes);
    box.appendChild(no);
    actions.replaceChild(box, trigger);
    yes.focus();
  }

  $('signin-form').addEventListener('submit', function (event) {
    event.preventDefault();
    const signUp = event.submitter && event.submitter.value === 'signup';
    const email = $('email').value.trim();
    const password = $('password').value;
    if (!email || !password) {
      say('Enter your email and password.', 'error');
      (email ? $('password') : $('email')).focus();
      return;
    }
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
      say('Enter an email address such as name@example.com.', 'error');
      $('email').focus();
      return;
    }
    if (signUp && password.length < 8) {
      say('Choose a password of at least 8 characters.', 'error');
      $('password').focus();
      return;
    }
    const payload = { email: email, password: password };
    if (signUp) {
      // The browser's zone when it is a known IANA name; otherwise the service's default, UTC.
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      if (zone && knownZones.indexOf(zone) >= 0) payload.timezone = zone;
    }
    say(signUp ? 'Creating your account…' : 'Signing in…');
    call('POST', authPath + (signUp ? '/signup' : '/login'), payload)
      .then(function (res) {
        if (res.status !== 200 && res.status !== 201) {
          say(errorText(res), 'error');
          $('password').focus();
          return;
        }
        $('password').value = '';
        // The authorize step asks the server again, which now shows the consent.
        if (authorizing) {
          window.location.reload();
          return;
        }
        say(signUp ? 'Account created; you are signed in.' : 'Signed in.', 'ok');
        return loadAccount().then(function () {
          $('account-title').focus();
        });
      })
      .catch(function () {
        say('The service could not be reached. Please try again.', 'error');
      });
  });

  $('signout').addEventListener('click', function () {
    call('POST', authPath + '/logout').then(function () {
      if (authorizing) {
        window.location.reload();
        return;
      }
      $('keys-body').textContent = '';
      $('apps-body').textContent = '';
      if (connectionsPath) $('connections-body').textContent = '';
      showSignedOut('Signed out.');
    });
  });

  $('timezone-form').addEventListener('submit', function (event) {
    event.preventDefault();
    call('PATCH', authPath + '/me', { timezone: $('timezone').value.trim() }).then(function (res) {
      if (res.status === 401) return showSignedOut('Your session has ended; please sign in again.');
      if (res.status !== 200) {
        say(errorText(res), 'error');
        $('timezone').focus();
        return;
      }
      currentZone = res.body.timezone;
      say('Time zone set to ' + res.body.timezone + '.', 'ok');
      return loadKeys();
    });
  });

  $('key-form').addEventListener('submit', function (event) {
    event.preventDefault();
    const name = $('key-name').value.trim();
    const scopes = Array.prototype.map.call(document.querySelectorAll('input[name="scope"]:checked'), function (box) {
      return box.value;
    });
    if (!name) {
      say('Give the key a name.', 'error');
      $('key-name').focus();
      return;
    }
    if (scopes.length === 0) {
      say('Choose at least one scope.', 'error');
      document.querySelector('input[name="scope"]').focus();
      return;
    }
    call('POST', keysPath, { name: name, scopes: scopes }).then(function (res) {
      if (res.status === 401) return showSignedOut('Your session has ended; please sign in again.');
      if (res.status !== 201) {
        say(errorText(res), 'error');
        return;
      }
      $('key-form').reset();
      // Shown once the list includes the key, so the page never shows a key it does not list.
      return loadKeys().then(function () {
        $('new-key').textContent = res.body.key;
        $('new-key-box').hidden = false;
        say('Key ' + name + ' created. Copy it now: it will not be shown again.', 'ok');
        $('new-key-box').focus();
      });
    });
  });

  $('copy').addEventListener('click', function () {
    const text = $('new-key').textContent;
    const done = function () {
      say('Key copied to the clipboard.', 'ok');
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {
        selectKey();
        say('Copying was refused: the key is selected, press Ctrl+C.', 'error');
      });
    } else {
      selectKey();
      try {
        document.execCommand('copy');
        done();
      } catch {
        say('The key is selected: press Ctrl+C to copy it.');
      }
    }
  });

  function selectKey() {
    const range = document.createRange();
    range.selectNodeContents($('new-key'));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  let knownZones = [];
  try {
    knownZones = Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : [];
    const list = $('timezones');
    knownZones.concat(['UTC']).forEach(function (zone) {
      const option = document.createElement('option');
      option.value = zone;
      list.appendChild(option);
    });
  } catch {
    /* the field still takes any name */
  }

  if (body.dataset.signedIn === 'true' && authorizing) {
    show(true);
    $('consent-title').focus();
  } else if (body.dataset.signedIn === 'true') loadAccount();
  else show(false);
})();
