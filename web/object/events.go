package object

import (
	"context"
	"net/url"
	"sort"
	"time"

	"kubeplay/server/inproc"
)

// EventsProps is what the object page shows of the Events about an object,
// as kubectl describe does under "Events:".
type EventsProps struct {
	Items []ObjectEventProps
	// Error: the Events could not be listed (the object is still shown).
	Error string
}

// ObjectEventProps is one Event, as a row of kubectl describe.
type ObjectEventProps struct {
	Type, Reason, From, Message string
	// Last is when it last happened (RFC 3339), Count how often.
	Last  string
	Count int64
	// Regarding is the object it is about; Href its page, when known.
	Regarding EventObject
	Href      string
}

// EventObject is the object an Event is about.
type EventObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// apiEvent is what the page reads of an Event through the core API, which
// serves events.k8s.io Events too (their series and reporting controller).
type apiEvent struct {
	Type, Reason, Message string
	Source                struct{ Component, Host string }
	ReportingComponent    string      `json:"reportingComponent"`
	ReportingInstance     string      `json:"reportingInstance"`
	FirstTimestamp        string      `json:"firstTimestamp"`
	LastTimestamp         string      `json:"lastTimestamp"`
	EventTime             string      `json:"eventTime"`
	Count                 int64       `json:"count"`
	InvolvedObject        EventObject `json:"involvedObject"`
	Series                *struct {
		Count            int64  `json:"count"`
		LastObservedTime string `json:"lastObservedTime"`
	} `json:"series"`
}

// events lists the Events about the object with uid, in its namespace (a
// cluster-scoped object's are in any), oldest first, as kubectl describe
// selects them.
func (h *Handler) events(ctx context.Context, namespace, uid string) *EventsProps {
	path := "/api/v1/events"
	if namespace != "" {
		path = "/api/v1/namespaces/" + url.PathEscape(namespace) + "/events"
	}
	items, err := Events(ctx, h.api, path+"?fieldSelector="+url.QueryEscape("involvedObject.uid="+uid))
	if err != nil {
		return &EventsProps{Error: err.Error()}
	}
	return &EventsProps{Items: items}
}

// Events lists the Events a list request path answers, oldest first.
func Events(ctx context.Context, api *inproc.Client, path string) ([]ObjectEventProps, error) {
	var list struct{ Items []apiEvent }
	if err := api.Get(ctx, path, &list); err != nil {
		return nil, err
	}
	var items []ObjectEventProps
	for _, e := range list.Items {
		items = append(items, describeEvent(e))
	}
	sort.SliceStable(items, func(i, j int) bool { return parseTime(items[i].Last).Before(parseTime(items[j].Last)) })
	return items, nil
}

func describeEvent(e apiEvent) ObjectEventProps {
	row := ObjectEventProps{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1), Last: e.LastTimestamp, Regarding: e.InvolvedObject}
	if row.Last == "" {
		row.Last = e.EventTime
	}
	if e.Series != nil {
		row.Count, row.Last = e.Series.Count, e.Series.LastObservedTime
	}
	// kubectl's From: the source, else the reporting controller, with the
	// host or instance after a comma.
	from, instance := e.Source.Component, e.Source.Host
	if from == "" {
		from, instance = e.ReportingComponent, e.ReportingInstance
	}
	if instance != "" {
		from += ", " + instance
	}
	row.From = from
	return row
}

// clock is when the event last happened as a time of day: events are
// recent, and the whole timestamp is in the cell's title.
func (e ObjectEventProps) clock() string {
	t := parseTime(e.Last)
	if t.IsZero() {
		return e.Last
	}
	return t.UTC().Format(time.TimeOnly)
}

// parseTime reads a timestamp or MicroTime; the zero time if it does not.
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
