#include "report/html_style.hpp"

namespace gpuvet {

const char* const kHtmlStyle = R"CSS(
:root{--bg:#fff;--fg:#1b1f24;--mute:#5b6570;--line:#d0d7de;--card:#f6f8fa;
--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--error:#8250df;--skip:#8c959f;--band:rgba(26,127,55,.16);
--h0:#0b3d91;--h1:#2f5fb3;--h2:#5d86cf;--h3:#94b3e6;--h4:#cfe0fa;--event:#cf222e}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mute:#9198a1;--line:#30363d;--card:#161b22;
--pass:#3fb950;--warn:#d29922;--fail:#f85149;--error:#a371f7;--skip:#6e7681;--band:rgba(63,185,80,.2);
--h0:#cfe0fa;--h1:#94b3e6;--h2:#5d86cf;--h3:#2f5fb3;--h4:#0b3d91;--event:#f85149}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1180px;padding:12px;background:var(--bg);color:var(--fg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow-wrap:anywhere}
table.matrix{overflow-wrap:normal}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.2em;margin:1.4em 0 .5em;border-bottom:1px solid var(--line)}
h3{font-size:1.05em;margin:1em 0 .3em}code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{overflow-x:auto;background:var(--card);padding:8px;border-radius:6px}#vendor-message{white-space:pre-wrap}
.banner{border-radius:8px;padding:12px 16px;color:#fff;background:var(--skip)}
.banner.pass{background:var(--pass)}.banner.warn{background:var(--warn)}.banner.fail{background:var(--fail)}
.banner.error{background:var(--error)}.banner p{margin:.2em 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;font-size:14px}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--card)}td.num{text-align:right;white-space:nowrap}
table.matrix td{text-align:center;white-space:nowrap}table.matrix th:first-child,table.matrix td:first-child{text-align:left;position:sticky;left:0;background:var(--bg)}
.v-pass{color:var(--pass)}.v-warn{color:var(--warn);font-weight:600}.v-fail{color:var(--fail);font-weight:700}
.v-error{color:var(--error);font-weight:700}.v-skip{color:var(--skip)}
td.v-fail,td.v-error{background:rgba(207,34,46,.1)}td.v-warn{background:rgba(154,103,0,.1)}
.finding{border-left:4px solid var(--line);padding:4px 12px;margin:10px 0;background:var(--card);border-radius:0 6px 6px 0}
.finding.fail,.finding.error{border-color:var(--fail)}.finding.warn{border-color:var(--warn)}
.note{color:var(--mute);font-size:13px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:12px}
figure{margin:0}.chart-box{background:var(--card);border-radius:6px;padding:8px}
figcaption{font-size:13px;color:var(--mute)}
svg.chart{width:100%;height:auto;display:block}
svg text{fill:var(--fg);font:11px system-ui,sans-serif}svg text.axis{fill:var(--mute);font-size:10px}
svg .plot{fill:none;stroke:var(--line)}svg .spec{stroke:var(--mute);stroke-dasharray:3 2}
svg .band{fill:var(--band)}svg .floor{stroke:var(--fail);stroke-width:2}
svg .bar.pass{fill:var(--pass)}svg .bar.warn{fill:var(--warn)}svg .bar.fail{fill:var(--fail)}svg .bar.error{fill:var(--error)}svg .bar.skip{fill:var(--skip)}
svg .line{fill:none;stroke-width:1.6}svg .lane{fill:var(--bg);stroke:var(--line)}
svg .event.fault{fill:var(--fail)}svg .event.limit{fill:var(--warn)}
.key span{display:inline-block;margin-right:10px;white-space:nowrap}.key i{display:inline-block;width:14px;height:3px;vertical-align:middle;margin-right:4px}
.key .s0{background:#1f77b4}.key .s1{background:#d62728}.key .s2{background:#2ca02c}.key .s3{background:#9467bd}
.key .s4{background:#ff7f0e}.key .s5{background:#17becf}.key .s6{background:#8c564b}.key .s7{background:#e377c2}
figure.heat-box{max-width:520px}
svg .s0{stroke:#1f77b4}svg .s1{stroke:#d62728}svg .s2{stroke:#2ca02c}svg .s3{stroke:#9467bd}
svg .s4{stroke:#ff7f0e}svg .s5{stroke:#17becf}svg .s6{stroke:#8c564b}svg .s7{stroke:#e377c2}
svg .seg.s0{fill:#1f77b4}svg .seg.s1{fill:#d62728}svg .seg.s2{fill:#2ca02c}svg .seg.s3{fill:#9467bd}
svg .seg.s4{fill:#ff7f0e}svg .seg.s5{fill:#17becf}svg .seg.s6{fill:#8c564b}svg .seg.s7{fill:#e377c2}
svg text.seg-label{fill:#fff;font-size:11px;font-weight:600}
svg .heat.h0{fill:var(--h0)}svg .heat.h1{fill:var(--h1)}svg .heat.h2{fill:var(--h2)}svg .heat.h3{fill:var(--h3)}svg .heat.h4{fill:var(--h4)}
svg text.cell{fill:#000;font-size:9px}svg .heat.h0+text.cell,svg .heat.h1+text.cell{fill:#fff}
ol.sources{font-size:12px;color:var(--mute)}
@media (max-width:600px){body{padding:6px;font-size:14px}.grid{grid-template-columns:1fr}}
@media print{body{max-width:none;font-size:11px;background:#fff;color:#000}.banner{border:2px solid #000;color:#000;background:none!important}
.chart-box,.finding{break-inside:avoid}details{display:block}details>*{display:block}.scroll{overflow:visible}
a{color:#000}}
)CSS";

}  // namespace gpuvet
