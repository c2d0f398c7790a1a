package timeline

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

// HTMLLimit is the number of deliveries the HTML view draws. Past it the
// page shows the first HTMLLimit deliveries (with their arrows, traps and
// exits) and says how many it left out, so that the page of a long
// recording stays small enough for a browser; the Perfetto output has
// no limit.
const HTMLLimit = 5000

// payloadLimit cuts a payload's JSON view in the HTML page (on hover).
const payloadLimit = 300

// htmlPage is what the page's script draws, embedded in the page as
// JSON: one run, or a recording and its replay.
type htmlPage struct {
	Title      string      `json:"title"`
	Runs       []*htmlData `json:"runs"`
	Divergence string      `json:"divergence,omitempty"` // the first divergence, in words
}

// htmlData is one run's timeline as the page draws it.
type htmlData struct {
	Run     string     `json:"run"` // "recorded", "replayed"; "" for a single run
	Lanes   []string   `json:"lanes"`
	Boxes   []htmlBox  `json:"boxes"`
	Arrows  []htmlLink `json:"arrows"`
	Marks   []htmlMark `json:"marks"`
	Total   int        `json:"total"`   // deliveries in the recording
	Omitted int        `json:"omitted"` // deliveries left out past HTMLLimit
	Note    string     `json:"note"`    // e.g. why the recording is incomplete
	// Divergent is the box of the first divergence; -1 for none (or
	// past the limit).
	Divergent int `json:"divergent"`
}

type htmlBox struct {
	Lane       int    `json:"lane"`
	Coordinate string `json:"c"`
	Target     string `json:"target"`
	Topic      string `json:"topic"`
	Message    string `json:"m"`
	Payload    string `json:"p,omitempty"`
}

// htmlLink is an arrow in columns: From is the column the publish
// happened at (the box it was in, or the column of the next delivery
// when it was outside any handler), on lane Lane.
type htmlLink struct {
	Lane    int    `json:"lane"`
	From    int    `json:"from"`
	To      int    `json:"to"`
	Message string `json:"m"`
}

type htmlMark struct {
	Kind string `json:"kind"`
	Lane int    `json:"lane"`
	Col  int    `json:"col"`
	Text string `json:"text"`
}

// HTMLCounts is what the page draws: the test compares it with the
// elements a browser renders.
type HTMLCounts struct {
	Lanes, Boxes, Arrows, Marks, Omitted int
}

// htmlData selects what the page shows: the first HTMLLimit deliveries.
func (t *Timeline) htmlData(note string) *htmlData {
	d := &htmlData{Divergent: -1, Lanes: []string{}, Boxes: []htmlBox{}, Arrows: []htmlLink{}, Marks: []htmlMark{},
		Total: len(t.Boxes), Note: note}
	for _, l := range t.Lanes {
		d.Lanes = append(d.Lanes, l.Label())
	}
	shown := min(len(t.Boxes), HTMLLimit)
	d.Omitted = len(t.Boxes) - shown
	cut := t.Steps // the first step not shown
	if shown < len(t.Boxes) {
		cut = t.Boxes[shown].Step
	}
	for _, b := range t.Boxes[:shown] {
		p := string(b.Payload)
		if len(p) > payloadLimit {
			p = p[:payloadLimit] + "…"
		}
		d.Boxes = append(d.Boxes, htmlBox{Lane: b.Lane, Coordinate: b.Coordinate, Target: b.Target, Topic: b.Topic, Message: b.Message, Payload: p})
	}
	// column is the column a step outside any handler is drawn at: that
	// of the first delivery after it.
	column := func(step int) int {
		lo, hi := 0, shown
		for lo < hi {
			mid := (lo + hi) / 2
			if t.Boxes[mid].Step < step {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return lo
	}
	for _, a := range t.Arrows {
		if a.ToBox >= shown || a.FromBox >= shown {
			continue
		}
		from := a.FromBox
		if from < 0 {
			from = column(a.Step)
		}
		d.Arrows = append(d.Arrows, htmlLink{Lane: a.Lane, From: from, To: a.ToBox, Message: a.Message})
	}
	for _, m := range t.Marks {
		if m.Step >= cut {
			continue
		}
		col := m.Box
		if col < 0 {
			col = column(m.Step)
		}
		text := m.Text
		if m.Position != "" {
			text += " at " + m.Position
		}
		d.Marks = append(d.Marks, htmlMark{Kind: m.Kind, Lane: m.Lane, Col: col, Text: text})
	}
	return d
}

// HTMLCounts reports how many lanes, boxes, arrows and marks the HTML
// view of the timeline draws, and how many deliveries it leaves out.
func (t *Timeline) HTMLCounts() HTMLCounts {
	d := t.htmlData("")
	return HTMLCounts{len(d.Lanes), len(d.Boxes), len(d.Arrows), len(d.Marks), d.Omitted}
}

// LimitMessage is what the page (and `hale trace view`) says when it
// leaves deliveries out; "" when it shows them all.
func (t *Timeline) LimitMessage() string {
	if len(t.Boxes) <= HTMLLimit {
		return ""
	}
	return fmt.Sprintf("showing the first %d of %d deliveries; %d left out (the HTML view draws at most %d; --perfetto has them all)",
		HTMLLimit, len(t.Boxes), len(t.Boxes)-HTMLLimit, HTMLLimit)
}

// WriteHTML writes the timeline as one self-contained HTML page: inline
// CSS and script only, nothing fetched. The data is embedded as JSON
// (with <, > and & escaped, so it cannot close the script element) and
// drawn as SVG by the inline script. note, when not empty, is shown
// above the picture (e.g. that the recording is incomplete).
func (t *Timeline) WriteHTML(w io.Writer, title, note string) error {
	return writePage(w, &htmlPage{Title: title, Runs: []*htmlData{t.pageRun("", note)}})
}

// pageRun is the timeline as one run of a page, with the limit's message.
func (t *Timeline) pageRun(run, note string) *htmlData {
	d := t.htmlData(note)
	d.Run = run
	if msg := t.LimitMessage(); msg != "" {
		d.Note = strings.TrimSpace(d.Note + " " + msg)
	}
	return d
}

// Divergence locates the first divergence between a recording and its
// replay in both runs: the index of the entry on each side (-1 when that
// side has none), the coordinate C:N of the delivery whose handler it
// happened in, and the sentence that explains it.
type Divergence struct {
	RecordedEntry, ReplayedEntry int
	At                           string
	Sentence                     string
}

// boxOf is the box the entry belongs to (the delivery it is, or the
// handler run it happened in), else the box at coordinate at; -1 when
// neither exists.
func (t *Timeline) boxOf(entry int, at string) int {
	if entry >= 0 && entry < len(t.entryBox) && t.entryBox[entry] >= 0 {
		return t.entryBox[entry]
	}
	for i, b := range t.Boxes {
		if b.Coordinate == at {
			return i
		}
	}
	return -1
}

// WriteDiffHTML writes one self-contained page with both runs, the
// recording above its replay, and the first divergence marked in each
// (the box it happened in) and stated at the top.
func WriteDiffHTML(w io.Writer, title string, recorded, replayed *Timeline, d Divergence) error {
	rec, rep := recorded.pageRun("recorded", ""), replayed.pageRun("replayed", "")
	if b := recorded.boxOf(d.RecordedEntry, d.At); b >= 0 && b < len(rec.Boxes) {
		rec.Divergent = b
	}
	if b := replayed.boxOf(d.ReplayedEntry, d.At); b >= 0 && b < len(rep.Boxes) {
		rep.Divergent = b
	}
	return writePage(w, &htmlPage{Title: title, Runs: []*htmlData{rec, rep}, Divergence: d.Sentence})
}

func writePage(w io.Writer, p *htmlPage) error {
	title := p.Title
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	page := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(title),
		"{{DATA}}", string(data),
	).Replace(pageTemplate)
	_, err = io.WriteString(w, page)
	return err
}

// pageTemplate is the page. Each drawn element carries a data attribute
// (data-lane, data-box, data-arrow, data-mark, data-limit) by which
// tests count what a browser rendered.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>hale timeline: {{TITLE}}</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 12px; color: #222; }
h1 { font-size: 15px; margin: 0 0 6px; }
.note { background: #fff3cd; border: 1px solid #e0c060; padding: 4px 8px; margin: 6px 0; }
.legend span { margin-right: 14px; }
h2 { font-size: 14px; margin: 12px 0 2px; }
.view { overflow: auto; border: 1px solid #ccc; max-height: 85vh; }
.box.diverged { fill: #f6b26b; stroke: #d22; stroke-width: 3; }
svg text { font: 11px system-ui, sans-serif; }
.lane-bg { fill: #f7f7f7; }
.lane-bg.odd { fill: #eef2f7; }
.box { fill: #8fb4e3; stroke: #3d6fb0; }
.box.start { fill: #b8e0b0; stroke: #4d9a40; }
.arrow { stroke: #555; stroke-width: 1; fill: none; marker-end: url(#head); opacity: .55; }
.trap { fill: #d22; }
.exit { fill: #222; }
#tip { position: fixed; display: none; background: #fffbe6; border: 1px solid #999; padding: 4px 6px;
       font: 12px ui-monospace, monospace; white-space: pre-wrap; max-width: 480px; pointer-events: none; }
</style>
</head>
<body>
<h1>hale timeline: {{TITLE}}</h1>
<div id="divergence"></div>
<div class="legend"><span>&#9632; delivery (hover: topic, coordinate, payload)</span><span>&#8594; publish to delivery</span><span style="color:#d22">&#9670; trap</span><span>&#9670; exit</span></div>
<div id="runs"></div>
<div id="tip"></div>
<script type="application/json" id="timeline-data">{{DATA}}</script>
<script>
(function () {
  var page = JSON.parse(document.getElementById('timeline-data').textContent);
  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }
  if (page.divergence) {
    document.getElementById('divergence').innerHTML = '<p class="note diverged-note" data-divergence-note="1">first divergence: ' + esc(page.divergence) + '</p>';
  }
  var labelW = 180, colW = 28, boxW = 20, laneH = 34, boxH = 20, top = 8;
  function draw(d) {
    var s = 'lanes: ' + d.lanes.length + ', deliveries: ' + d.total + ', arrows: ' + d.arrows.length + ', traps and exits: ' + d.marks.length;
    var html = (d.run ? '<h2 data-run="' + esc(d.run) + '">' + esc(d.run) + '</h2>' : '') + '<p>' + esc(s) + '</p>';
    if (d.omitted > 0) {
      html += '<p class="note" data-limit="' + d.omitted + '">' + esc(d.note) + '</p>';
    } else if (d.note) {
      html += '<p class="note">' + esc(d.note) + '</p>';
    }
    var width = labelW + Math.max(1, d.boxes.length) * colW + 20;
    var height = top + d.lanes.length * laneH + 8;
    function laneY(l) { return top + l * laneH; }
    function colX(c) { return labelW + c * colW; }
    var out = [];
    out.push('<div class="view"><svg width="' + width + '" height="' + height + '">');
    out.push('<defs><marker id="head" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#555"/></marker></defs>');
    d.lanes.forEach(function (name, i) {
      out.push('<g data-lane="' + i + '"><rect class="lane-bg' + (i % 2 ? ' odd' : '') + '" x="0" y="' + laneY(i) + '" width="' + width + '" height="' + laneH + '"/>' +
        '<text x="4" y="' + (laneY(i) + laneH / 2 + 4) + '">' + esc(name) + '</text></g>');
    });
    d.boxes.forEach(function (b, i) {
      var diverged = i === d.divergent;
      var tip = b.target + ' on ' + b.topic + '\n' + b.c + '  message ' + b.m + (b.p ? '\npayload ' + b.p : '') +
        (diverged ? '\nfirst divergence: ' + page.divergence : '');
      out.push('<rect class="box' + (b.topic === 'start' ? ' start' : '') + (diverged ? ' diverged' : '') + '" data-box="' + esc(b.c) + '"' +
        (diverged ? ' data-divergence="' + esc(b.c) + '"' : '') + ' data-tip="' + esc(tip) + '" x="' + colX(i) +
        '" y="' + (laneY(b.lane) + (laneH - boxH) / 2) + '" width="' + boxW + '" height="' + boxH + '"><title>' + esc(tip) + '</title></rect>');
    });
    d.arrows.forEach(function (a) {
      var to = d.boxes[a.to];
      var x1 = colX(a.from) + boxW / 2, y1 = laneY(a.lane) + laneH / 2;
      var x2 = colX(a.to), y2 = laneY(to.lane) + laneH / 2;
      var mx = (x1 + x2) / 2;
      out.push('<path class="arrow" data-arrow="' + esc(a.m) + '" d="M' + x1 + ',' + y1 + ' C' + mx + ',' + y1 + ' ' + mx + ',' + y2 + ' ' + x2 + ',' + y2 + '"/>');
    });
    d.marks.forEach(function (m) {
      var x = colX(m.col) + boxW / 2, y = laneY(m.lane) + 5;
      out.push('<path class="' + (m.kind === 'trap' ? 'trap' : 'exit') + '" data-mark="' + esc(m.kind) + '" data-tip="' + esc(m.kind + ': ' + m.text) +
        '" d="M' + x + ',' + (y - 5) + ' l5,5 l-5,5 l-5,-5 z"><title>' + esc(m.kind + ': ' + m.text) + '</title></path>');
    });
    out.push('</svg></div>');
    return '<section>' + html + out.join('') + '</section>';
  }
  document.getElementById('runs').innerHTML = page.runs.map(draw).join('');

  var tipEl = document.getElementById('tip');
  document.getElementById('runs').addEventListener('mousemove', function (ev) {
    var t = ev.target.getAttribute && ev.target.getAttribute('data-tip');
    if (!t) { tipEl.style.display = 'none'; return; }
    tipEl.textContent = t;
    tipEl.style.left = (ev.clientX + 12) + 'px';
    tipEl.style.top = (ev.clientY + 12) + 'px';
    tipEl.style.display = 'block';
  });
})();
</script>
</body>
</html>
`
