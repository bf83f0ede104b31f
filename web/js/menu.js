// menu.js - the context menu, and the pattern edits its items make
// (Fold Item, Group Module, Include Item, ...; perfview-semantics.md §11).

const menu = () => document.getElementById('menu');

// items: [{label, key, action, disabled}] or '-' for a separator.
export function showMenu(x, y, items) {
  const m = menu();
  m.textContent = '';
  for (const it of items) {
    if (it === '-') {
      m.append(document.createElement('hr'));
      continue;
    }
    const b = document.createElement('button');
    b.type = 'button';
    b.disabled = !!it.disabled;
    b.dataset.action = it.id || '';
    const l = document.createElement('span');
    l.textContent = it.label;
    b.append(l);
    if (it.key) {
      const k = document.createElement('span');
      k.className = 'key';
      k.textContent = it.key;
      b.append(k);
    }
    b.addEventListener('click', () => {
      hideMenu();
      it.action();
    });
    m.append(b);
  }
  m.hidden = false;
  const r = m.getBoundingClientRect();
  m.style.left = `${Math.min(x, innerWidth - r.width - 4)}px`;
  m.style.top = `${Math.min(y, innerHeight - r.height - 4)}px`;
  m.querySelector('button:not(:disabled)')?.focus();
}

export function hideMenu() {
  menu().hidden = true;
}

document.addEventListener('mousedown', (ev) => {
  if (!menu().hidden && !ev.target.closest('#menu')) hideMenu();
});
document.addEventListener('keydown', (ev) => {
  if (menu().hidden) return;
  if (ev.key === 'Escape') {
    hideMenu();
    ev.preventDefault();
  } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    const bs = [...menu().querySelectorAll('button:not(:disabled)')];
    const i = bs.indexOf(document.activeElement);
    bs[(i + (ev.key === 'ArrowDown' ? 1 : bs.length - 1)) % bs.length]?.focus();
    ev.preventDefault();
  }
});

// A simplified pattern matching @name literally: the name itself when it
// holds none of the special characters, else a raw regular expression
// ("@..."), where ';' (the list separator) can only be matched by '.'.
export function literalPattern(name) {
  if (!/[*%^|{}@;]/.test(name) && name.trim() === name) return name;
  return '@' + name.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&').replace(/;/g, '.').replace(/\s/g, '\\s');
}

export function appendPat(list, pat) {
  const t = list.trim();
  return t ? `${t};${pat}` : pat;
}

// Remove the GroupPats entries that make group @group ("pat->group"); null
// when no entry does (a preset's "{%}!->module $1" names no group itself).
export function dropGroup(list, group) {
  const m = /^\s*(\[[^\]]*\])?\s*(.*)$/s.exec(list);
  const all = m[2].split(';');
  const kept = all.filter((e) => {
    const a = e.indexOf('=>') >= 0 ? e.indexOf('=>') : e.indexOf('->');
    return a < 0 || e.slice(a + 2).trim() !== group;
  });
  if (kept.length === all.length) return null;
  const desc = m[1] ? m[1] + ' ' : '';
  return desc + kept.join(';');
}

// Whether Ungroup applies to @row (a row of the API, whose "group" says
// what its name stands for: the GUI never parses names).
export function canUngroup(row) {
  return row?.group === 'plain' || row?.group === 'entry';
}

// Ungroup of @row in GroupPats @list done here: a plain group that
// entries name ("Thread -> AllThreads") loses them. null when no entry
// names it: a template's group ("class $1") or an entry group, which only
// the server can take out exactly (/api/ungroup: it knows which frames
// they are).
export function ungroupNamed(list, row) {
  return row.group === 'plain' ? dropGroup(list, row.key) : null;
}
