#!/usr/bin/env python3
"""Draw bench_node_agents' figures as one SVG (plain python3, no plotting library).

Usage: bench/plot_node_agents.py [-o OUT.svg] BENCH_OUTPUT...   (default docs/img/node-agents-scale.svg)

Reads the `BENCH node_agents_<pattern>_r<R>_<metric> <value> <unit>` lines of one or more runs
(the median of the runs per figure), prints the figures as Markdown tables and draws two panels
against the churn rate R (pods created and deleted per second, cluster-wide; evenly spaced
categories): the agents' API requests per hour (log scale; measured points and the formula's
line; a measured 0 sits on the "0" row below the axis), and the API server's CPU seconds per hour
for the churn alone, with 100 watching agents and with 100 GET-per-pod agents.
"""
import math
import re
import statistics
import sys

SERIES = {  # pattern: (label, colour)
    "churn": ("churn only (no agent)", "#777777"),
    "watch": ("watch: kc_podmeta per node", "#1f77b4"),
    "get": ("GET per pod (mmkubernetes, fluent-bit)", "#d62728"),
}
W, H = 980, 430
PANEL_W, PANEL_H = 380, 290
LEFT = [80, 570]
TOP = 60


def read(paths):
    runs = {}
    pat = re.compile(r"^BENCH node_agents_(churn|watch|get)_(r\d+|start)_(\w+) (\S+) ")
    for path in paths:
        with open(path) as f:
            for line in f:
                m = pat.match(line)
                if m:
                    r = -1 if m.group(2) == "start" else int(m.group(2)[1:])
                    runs.setdefault((m.group(1), r, m.group(3)), []).append(float(m.group(4)))
    vals = {k: statistics.median(v) for k, v in runs.items()}
    rates = sorted({k[1] for k in vals if k[1] >= 0})
    return vals, rates


def tables(vals, rates, nruns):
    g = vals.get
    print(f"Medians of {nruns} run(s).\n")
    print("| | watch: kc_podmeta | GET per pod |\n|---|---|---|")
    for m, name in (("s", "100 agents starting at once: all ready (s)"),
                    ("requests", "… requests (measured)"),
                    ("paper_requests", "… requests (on paper)"),
                    ("server_cpu_s", "… server CPU (s)")):
        print(f"| {name} | {g(('watch', -1, m), 0):,.2f} | {g(('get', -1, m), 0):,.2f} |")
    print("\n| R (pods/s) | churn only: server CPU s/h | watch: agent requests/h "
          "(on paper) | watch: server CPU s/h (agents' share) | GET: agent requests/h "
          "(on paper) | GET: server CPU s/h (agents' share) | load |\n|---|---|---|---|---|---|---|")
    for r in rates:
        cells = [f"{g(('churn', r, 'server_cpu_s_per_hour'), 0):,.0f}"]
        for p in ("watch", "get"):
            cells.append(f"{g((p, r, 'agent_requests_per_hour'), 0):,.0f} "
                         f"({g((p, r, 'paper_requests_per_hour'), 0):,.0f})")
            cells.append(f"{g((p, r, 'server_cpu_s_per_hour'), 0):,.0f} "
                         f"({g((p, r, 'agents_server_cpu_s_per_hour'), 0):+,.0f})")
        loads = [g((p, r, "load"), 0) for p in ("churn", "watch", "get")]
        cells.append(f"{min(loads):.1f}–{max(loads):.1f}")
        print(f"| {r} | " + " | ".join(cells) + " |")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def text(x, y, s, size=12, anchor="middle", extra=""):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-family="sans-serif"{extra}>{esc(s)}</text>')


def axes(out, x0, title, ylabel, rates, xpos):
    y0 = TOP + PANEL_H
    out.append(f'<rect x="{x0}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" fill="none" '
               'stroke="#000"/>')
    out.append(text(x0 + PANEL_W / 2, TOP - 12, title, 14, extra=' font-weight="bold"'))
    out.append(text(x0 - 58, TOP + PANEL_H / 2, ylabel, 12,
                    extra=f' transform="rotate(-90 {x0 - 58} {TOP + PANEL_H / 2})"'))
    for r in rates:
        out.append(f'<line x1="{xpos(r):.1f}" y1="{y0}" x2="{xpos(r):.1f}" y2="{y0 + 5}" '
                   'stroke="#000"/>')
        out.append(text(xpos(r), y0 + 20, str(r)))
    out.append(text(x0 + PANEL_W / 2, y0 + 40, "churn R (pods created + deleted per second)"))


def polyline(out, pts, colour, dash=False):
    if len(pts) > 1:
        d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        da = ' stroke-dasharray="6,4"' if dash else ""
        out.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"{da}/>')


def marker(out, x, y, colour):
    out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="{colour}"/>')


def requests_panel(out, vals, rates, xpos):
    x0 = LEFT[0]
    vs = [v for k, v in vals.items() if k[2] in ("agent_requests_per_hour",
                                                 "paper_requests_per_hour") and v > 0]
    lo = 10 ** math.floor(math.log10(min(vs))) if vs else 1
    hi = 10 ** math.ceil(math.log10(max(vs))) if vs else 10
    lo, hi = min(lo, 100), max(hi, 1000)
    y0 = TOP + PANEL_H

    band = PANEL_H - 30  # the decades; below them, the "0" row

    def ypos(v):
        if v <= 0:
            return y0 - 8.0
        return TOP + band * (1 - (math.log10(v) - math.log10(lo)) /
                             (math.log10(hi) - math.log10(lo)))

    axes(out, x0, "agents' API requests per hour", "requests / hour (log scale)",
         rates, xpos)
    e = math.log10(lo)
    while e <= math.log10(hi) + 1e-9:
        y = ypos(10 ** e)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + PANEL_W}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
        names = {0: "1", 1: "10", 2: "100", 3: "1k", 4: "10k", 5: "100k", 6: "1M", 7: "10M"}
        out.append(text(x0 - 6, y + 4, names.get(int(e), f"1e{int(e)}"), 11, "end"))
        e += 1
    out.append(text(x0 - 6, y0 - 4, "0", 11, "end"))
    start = [f"{p}: {vals.get((p, -1, 'requests'), 0):,.0f}" for p in ("watch", "get")]
    out.append(text(x0 + 8, TOP + 16, "100 agents starting at once — " + ", ".join(start) +
                    " requests", 11, "start"))
    for pat in ("watch", "get"):
        label, colour = SERIES[pat]
        paper = [(xpos(r), ypos(vals.get((pat, r, "paper_requests_per_hour"), 0))) for r in rates]
        polyline(out, paper, colour, dash=True)
        meas = [(xpos(r), ypos(vals.get((pat, r, "agent_requests_per_hour"), 0))) for r in rates]
        polyline(out, meas, colour)
        for x, y in meas:
            marker(out, x, y, colour)


def cpu_panel(out, vals, rates, xpos):
    x0 = LEFT[1]
    vs = [v for k, v in vals.items() if k[2] == "server_cpu_s_per_hour"]
    hi = max(vs) if vs else 1
    step = 10 ** math.floor(math.log10(hi)) if hi > 0 else 1
    top = math.ceil(hi / step) * step
    if top / step < 4:
        step /= 2

    def ypos(v):
        return TOP + PANEL_H * (1 - v / top)

    axes(out, x0, "API server CPU per hour (measured)", "CPU seconds / hour", rates, xpos)
    v = 0.0
    while v <= top + 1e-9:
        y = ypos(v)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + PANEL_W}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
        out.append(text(x0 - 6, y + 4, f"{v:g}", 11, "end"))
        v += step
    for pat in ("churn", "watch", "get"):
        colour = SERIES[pat][1]
        pts = [(xpos(r), ypos(vals.get((pat, r, "server_cpu_s_per_hour"), 0))) for r in rates]
        polyline(out, pts, colour)
        for x, y in pts:
            marker(out, x, y, colour)


def legend(out):
    y = H - 28
    x = 80
    for pat in ("churn", "watch", "get"):
        label, colour = SERIES[pat]
        out.append(f'<circle cx="{x}" cy="{y - 4}" r="4.5" fill="{colour}"/>')
        out.append(text(x + 10, y, label, 12, "start"))
        x += 20 + 7 * len(label)
    out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 30}" y2="{y - 4}" stroke="#000" '
               'stroke-width="2" stroke-dasharray="6,4"/>')
    out.append(text(x + 36, y, "on paper (formula)", 12, "start"))


def main():
    args = sys.argv[1:]
    dest = "docs/img/node-agents-scale.svg"
    if len(args) >= 2 and args[0] == "-o":
        dest, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    vals, rates = read(args)
    if not rates:
        sys.exit("plot_node_agents: no node_agents BENCH lines in " + " ".join(args))
    tables(vals, rates, len(args))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}">', f'<rect width="{W}" height="{H}" fill="#fff"/>']
    for i, x0 in enumerate(LEFT):
        def xpos(r, x0=x0):
            return x0 + PANEL_W * (rates.index(r) + 0.5) / len(rates)
        (requests_panel if i == 0 else cpu_panel)(out, vals, rates, xpos)
    legend(out)
    out.append("</svg>")
    with open(dest, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\nplot_node_agents: wrote " + dest)


if __name__ == "__main__":
    main()
