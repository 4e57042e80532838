package cost

import (
	"fmt"
	"strings"
)

// Gantt renders the paid window by stage as a Mermaid gantt chart: one bar
// per stage, in order, from the pod's provider start (0 s) to its confirmed
// deletion, grouped into sections by kind. A picture of where the paid
// seconds went reads faster than the stage table it sits under. It is empty
// when there is no breakdown.
//
// Times are milliseconds from the provider start (dateFormat x: Unix
// milliseconds from 0), so the axis shows elapsed time whatever the window's
// date. Not seconds (dateFormat X): Mermaid 11 and later read a task's start
// under X as milliseconds and its end as seconds, which draws every bar from
// 00:00; x reads the same in 10, 11 and 12 (pkg/demo's browser test renders
// the chart in each and checks the bars' places). Mermaid labels the axis in
// the viewer's local time, so it shows minutes and seconds only, which
// whole-hour time-zone offsets leave unchanged (a window over an hour wraps
// its labels, never its bars). Zero-second stages draw nothing and are left
// out.
func (r Report) Gantt() string {
	if len(r.Stages) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n    title Paid window by stage (elapsed from the pod's start)\n")
	b.WriteString("    dateFormat x\n    axisFormat %M:%S\n    todayMarker off\n")
	var at int64
	section := StageKind("")
	for i, s := range r.Stages {
		from := at
		at += s.Seconds
		if s.Seconds <= 0 {
			continue
		}
		if s.Kind != section {
			section = s.Kind
			fmt.Fprintf(&b, "    section %s\n", s.Kind)
		}
		fmt.Fprintf(&b, "    %s (%d s) :s%d, %d, %d\n", ganttText(s.Name), s.Seconds, i, from*1000, at*1000)
	}
	b.WriteString("```\n\n")
	return b.String()
}

// ganttText keeps a step name (chosen by whoever wrote the workflow) from
// ending the task's name (":"), starting a comment ("%%" or "#") or another
// statement (";" or a line break) inside the Mermaid block.
func ganttText(s string) string {
	s = strings.NewReplacer(":", " -", ";", ",", "#", "", "%", "", "`", "'").Replace(s)
	if s = oneLine(s); s == "" {
		return "unnamed step"
	}
	return s
}
