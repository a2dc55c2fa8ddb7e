// The docshard console: plain JavaScript, no build step. Each panel arrives as a server-sent event
// of its own name whenever it changes (src/console/console_server.ts) and is drawn from it alone.
'use strict';

const PALETTE = ['#3b73d9', '#e0822f', '#2aa876', '#b94fc2', '#d94b4b', '#8a6d3b', '#1ba3b8', '#7b7f2a'];
const shardColors = new Map();
const colorOf = (shard) => {
  if (!shardColors.has(shard)) shardColors.set(shard, PALETTE[shardColors.size % PALETTE.length]);
  return shardColors.get(shard);
};

const $ = (selector) => document.querySelector(selector);
const esc = (v) => String(v ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const bytes = (n) => (n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(1)} GiB` : n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);
const count = (n) => Number(n).toLocaleString('en');
const duration = (s) => (s == null ? '–' : s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`);
const badge = (up, yes = 'up', no = 'down') => `<span class="badge ${up ? 'up' : 'down'}">${up ? yes : no}</span>`;
const table = (head, rows) => `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
const swatch = (shard) => shard.split(',').map((s) => `<span class="swatch" style="background:${colorOf(s)}"></span>`).join('') + esc(shard);

const draw = {
  topology(t) {
    const members = (rs) => (rs == null ? '' : `<div class="meta" data-set="${esc(rs.set)}">set ${esc(rs.set)} · term ${rs.term}${rs.electedAt ? ` · elected ${new Date(rs.electedAt).toLocaleTimeString()}` : ''}</div>`
      + rs.members.map((m) => `<div class="meta member" data-member="${esc(m.host)}">${esc(m.host)} <span class="badge ${m.state === 'PRIMARY' || m.state === 'SECONDARY' ? 'up' : 'down'}" data-state>${esc(m.state)}</span>${m.lagSecs == null ? '' : ` <span data-lag>lag ${m.lagSecs}s</span>`}</div>`).join(''));
    const node = (n, extra = '') => `<div class="node" data-node="${esc(n.name)}"><div class="name">${esc(n.name)} ${badge(n.up)} ${extra}</div>`
      + `<div class="meta">${esc(n.host ?? '')}</div><div class="meta">${n.up ? `v${esc(n.version)} · up ${duration(n.uptimeSecs)} · ${n.pingMs} ms · ${n.connections} conns` : esc(n.error ?? '')}</div>${members(n.replicaSet)}</div>`;
    $('#topology .body').innerHTML = `<h3>Config server</h3><div class="nodes">${node(t.config)}</div>`
      + `<h3>Shards</h3><div class="nodes">${t.shards.map((s) => node(s, `${s.draining ? '<span class="badge warn">draining</span>' : ''} ${s.zones.map((z) => `<span class="badge">${esc(z)}</span>`).join(' ')}`)).join('')}</div>`
      + `<h3>Routers</h3><div class="nodes">${t.routers.map((r) => `<div class="node" data-node="${esc(r.name)}"><div class="name">${esc(r.name)} ${badge(r.up)}</div><div class="meta">v${esc(r.version)} · up ${duration(r.uptimeSecs)} · pinged ${r.lastPingSecs}s ago</div></div>`).join('')}</div>`;
  },
  balancer(b) {
    $('#balancer .body').innerHTML = `<p>mode <b data-mode>${esc(b.mode)}</b> · ${b.inRound ? '<span class="badge warn" data-round>round running</span>' : '<span class="badge">idle</span>'}`
      + ` · ${count(b.rounds)} rounds · window ${esc(b.window ?? 'always')}</p><h3>Recent rounds</h3>`
      + (b.recent.length === 0 ? '<p class="muted">none yet</p>' : table(['time', 'took', 'candidates', 'moved', 'outcome'], b.recent.map((r) => `<tr><td>${new Date(r.time).toLocaleTimeString()}</td><td class="num">${r.ms} ms</td><td class="num">${r.candidates}</td><td class="num">${r.moved}</td><td>${r.error ? `<span class="badge down">${esc(r.error)}</span>` : 'ok'}</td></tr>`)));
  },
  collections(list) {
    $('#collections .body').innerHTML = list.length === 0 ? '<p class="muted">no sharded collection</p>' : list.map((c) => {
      const max = Math.max(1, ...c.shards.map((s) => s.ownedDocs + s.orphanedDocs));
      const rows = c.shards.map((s) => `<tr data-shard="${esc(s.shard)}"><td>${swatch(s.shard)}</td><td class="num" data-chunks>${s.chunks}</td><td class="num" data-docs>${count(s.ownedDocs)}</td><td class="num">${count(s.orphanedDocs)}</td><td class="num">${bytes(s.ownedBytes)}</td>`
        + `<td><div class="bar"><div style="width:${(100 * s.ownedDocs) / max}%;background:${colorOf(s.shard)}"></div><div class="orphaned" style="width:${(100 * s.orphanedDocs) / max}%"></div></div></td></tr>`);
      return `<div class="collection" data-ns="${esc(c.ns)}"><h3>${esc(c.ns)} <span class="muted">key ${esc(c.key)} · ${c.chunks} chunks</span></h3>${table(['shard', 'chunks', 'owned docs', 'orphaned', 'owned bytes', 'owned ▮ / orphaned ▨'], rows)}</div>`;
    }).join('');
  },
  shardMap(list) {
    $('#shard-map .body').innerHTML = list.map((m) => {
      const pct = (n) => (100 * n) / Math.max(1, m.chunks);
      const zones = m.zones.map((z) => `<div class="zone" style="left:${pct(z.from)}%;width:${pct(z.to - z.from)}%" title="${esc(z.min)} – ${esc(z.max)}">${esc(z.zone)}</div>`).join('');
      const segments = m.segments.map((s) => `<div style="width:${pct(s.to - s.from)}%;background:${colorOf(s.shard.split(',')[0])}" title="${esc(s.shard)}: ${esc(s.min)} – ${esc(s.max)} (${s.to - s.from} chunks)"></div>`).join('');
      const legend = [...new Set(m.segments.map((s) => s.shard))].map(swatch).join(' &nbsp; ');
      return `<div class="map" data-ns="${esc(m.ns)}"><h3>${esc(m.ns)} <span class="muted">${m.chunks} chunks, MinKey → MaxKey</span></h3>${zones ? `<div class="zones">${zones}</div>` : ''}<div class="strip">${segments}</div><div class="muted">${legend}</div></div>`;
    }).join('') || '<p class="muted">no sharded collection</p>';
  },
  migrations(m) {
    $('#migrations .in-flight').innerHTML = m.inFlight.length === 0 ? '<p class="muted" data-none>none</p>' : table(['collection', 'range', 'donor → recipient', 'phase', 'cloned', 'progress'], m.inFlight.map((x) => `<tr data-migration="${esc(x.id)}"><td>${esc(x.ns)}</td><td>${esc(x.min)} – ${esc(x.max)}</td><td>${swatch(x.from)} → ${swatch(x.to)}</td><td data-phase>${esc(x.phase)}${x.recipientState ? ` / ${esc(x.recipientState)}` : ''}</td>`
      + `<td class="num">${count(x.clonedDocs)} docs, ${bytes(x.clonedBytes)}</td><td><span class="progress"><div style="width:${x.progress == null ? 0 : 100 * x.progress}%"></div></span> <span data-progress>${x.progress == null ? '' : `${Math.round(100 * x.progress)}%`}</span></td></tr>`));
    $('#migrations .history').innerHTML = m.history.length === 0 ? '<p class="muted">none</p>' : table(['time', 'collection', 'range', 'donor → recipient', 'outcome', 'cloned'], m.history.map((h) => `<tr data-outcome="${h.outcome}"><td>${new Date(h.time).toLocaleTimeString()}</td><td>${esc(h.ns)}</td><td>${esc(h.min)} – ${esc(h.max)}</td><td>${swatch(h.from)} → ${swatch(h.to)}</td><td>${h.outcome === 'committed' ? '<span class="badge up">committed</span>' : '<span class="badge down">aborted</span>'}</td><td class="num">${count(h.clonedDocs)} docs, ${bytes(h.clonedBytes)}</td></tr>`));
  },
  throughput(t) {
    chart('ops', 'operations/s (reads + writes)', t, (k) => k.endsWith(' ops/s'));
    chart('latency', 'latency, ms (p50 dashed, p99 solid)', t, (k) => k.endsWith(' ms'));
    const cell = (c) => (c.opsPerSec == null ? '–' : `${c.opsPerSec}/s`);
    const ms = (v) => (v == null ? '–' : `${v} ms`);
    $('#throughput .table').innerHTML = table(['node', 'reads', 'p50', 'p99', 'writes', 'p50', 'p99', 'commands', 'p50', 'p99'], t.table.map((r) => `<tr data-node="${esc(r.node)}"><td>${esc(r.node)}</td>${['reads', 'writes', 'commands'].map((k) => `<td class="num" data-${k}>${cell(r[k])}</td><td class="num">${ms(r[k].p50Ms)}</td><td class="num">${ms(r[k].p99Ms)}</td>`).join('')}</tr>`));
    $('#throughput').dataset.opsTotal = String(Object.entries(t.series).filter(([k]) => k.endsWith(' ops/s')).reduce((n, [, v]) => n + (v[v.length - 1] ?? 0), 0));
  },
  operations(ops) {
    $('#operations .body').innerHTML = ops.length === 0 ? '<p class="muted" data-none>none over 1 s</p>' : table(['opid', 'where', 'op', 'namespace', 'running', 'what', ''], ops.map((o) => `<tr data-opid="${esc(o.opid)}"><td>${esc(o.opid)}</td><td>${esc(o.where)}</td><td>${esc(o.op)}</td><td>${esc(o.ns)}</td><td class="num">${o.secs} s</td><td title="${esc(o.command)}">${esc(o.desc)} ${esc(o.command.slice(0, 80))}</td>`
      + `<td>${o.killable ? `<button class="kill" data-kill="${esc(o.opid)}">Kill</button>` : ''}</td></tr>`));
  },
  heat(maps) {
    lastHeat = maps;
    drawHeat();
  },
  failure(f) {
    $('#updated').textContent = `look failed: ${f.message}`;
  },
};

// uPlot charts, made again when their series change (a shard added).
const charts = {};
function chart(name, title, t, pick) {
  const keys = Object.keys(t.series).filter(pick).sort();
  const data = [t.times, ...keys.map((k) => t.series[k])];
  const el = $(`#throughput .chart.${name}`);
  const signature = keys.join('|');
  if (charts[name]?.signature !== signature) {
    charts[name]?.plot.destroy();
    el.innerHTML = `<h4>${esc(title)}</h4>`;
    const series = [{}, ...keys.map((k) => {
      const node = k.split(' ')[0];
      return { label: k, stroke: node === 'router' ? '#1d2330' : colorOf(node), width: 1.5, dash: k.includes('p50') ? [4, 4] : undefined, spanGaps: true };
    })];
    const plot = new uPlot({ width: Math.max(300, el.clientWidth - 4), height: 200, series, axes: [{}, { size: 50 }], legend: { live: false } }, data, el);
    charts[name] = { plot, signature };
  } else {
    charts[name].plot.setData(data);
  }
}

// The heat map: a canvas per collection, chunks in key order bottom (MinKey) to top (MaxKey), time
// left to right, brighter where more requests were targeted.
let lastHeat = [];
function drawHeat() {
  const kind = $('#heat-kind').value;
  const body = $('#heat .body');
  if (lastHeat.length === 0) {
    body.innerHTML = '<p class="muted">no request targeted a sharded collection since the console opened</p>';
    return;
  }
  body.innerHTML = '';
  for (const m of lastHeat) {
    const rows = m.rows.length;
    const cols = m.columns.length;
    const value = (r, c) => (kind === 'reads' ? m.reads[r][c] : kind === 'writes' ? m.writes[r][c] : m.reads[r][c] + m.writes[r][c]);
    let max = 0;
    const totals = new Array(rows).fill(0);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) { max = Math.max(max, value(r, c)); totals[r] += value(r, c); }
    const hottest = totals.indexOf(Math.max(...totals));
    const wrap = document.createElement('div');
    wrap.className = 'heatmap';
    wrap.dataset.ns = m.ns;
    wrap.dataset.hotRow = String(hottest);
    wrap.dataset.rows = String(rows);
    const cell = 8;
    const canvas = document.createElement('canvas');
    canvas.width = cols * cell;
    canvas.height = rows * cell;
    const ctx = canvas.getContext('2d');
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = value(r, c);
        const a = max === 0 || v === 0 ? 0 : 0.15 + 0.85 * Math.sqrt(v / max);
        ctx.fillStyle = v === 0 ? '#f1f3f6' : `rgba(217, 75, 40, ${a})`;
        ctx.fillRect(c * cell, (rows - 1 - r) * cell, cell - 1, cell - 1);
      }
    }
    const hot = m.rows[hottest];
    wrap.innerHTML = `<h3>${esc(m.ns)} <span class="muted">${rows} rows of chunks × ${cols} columns of 2 s</span></h3>`
      + `<div class="grid"><div class="labels"><span>${esc(m.rows[rows - 1].max)}</span><span>${esc(m.rows[0].min)}</span></div></div>`
      + `<p class="hot">hottest: <b data-hot>[${esc(hot.min)}, ${esc(hot.max)})</b> on ${swatch(hot.shard)} · ${count(totals[hottest])} ${kind === 'both' ? 'reads + writes' : kind} in the window</p>`;
    wrap.querySelector('.grid').appendChild(canvas);
    body.appendChild(wrap);
  }
}
$('#heat-kind').addEventListener('change', drawHeat);

$('#operations').addEventListener('click', async (e) => {
  const button = e.target.closest('button[data-kill]');
  if (!button) return;
  button.disabled = true;
  const res = await fetch('/kill', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ opid: Number(button.dataset.kill) }) });
  const reply = await res.json();
  button.textContent = reply.ok ? 'killed' : `failed: ${reply.errmsg}`;
});

const events = new EventSource('/events');
events.onopen = () => { $('#connection').className = 'badge up'; $('#connection').textContent = 'live'; };
events.onerror = () => { $('#connection').className = 'badge down'; $('#connection').textContent = 'reconnecting…'; };
for (const [name, fn] of Object.entries(draw)) {
  events.addEventListener(name, (e) => {
    fn(JSON.parse(e.data));
    $('#updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
    const panel = document.getElementById(name === 'shardMap' ? 'shard-map' : name);
    if (panel) panel.dataset.updated = String(Date.now());
  });
}
