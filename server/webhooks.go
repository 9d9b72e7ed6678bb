package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"reflect"
	"strconv"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/celeval"
	"kubeplay/server/celtypes"
	"kubeplay/server/encoding"
	"kubeplay/server/webhook"
)

// Admission webhooks: the MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook plugins of kube-apiserver. Every write asks
// the configurations stored at that moment (ordered by name, their webhooks
// in order) which webhooks match it, and calls them as kube-apiserver calls
// them (package webhook).

var (
	mutatingWebhooksGVR   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
	validatingWebhooksGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	servicesGVR           = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	endpointSlicesGVR     = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// The part of a webhook configuration admission reads; its defaults are
// those of admissionregistration.k8s.io/v1 (failurePolicy Fail, matchPolicy
// Equivalent, reinvocationPolicy Never, timeoutSeconds 10).
type (
	webhookConfiguration struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Webhooks []admissionWebhook `json:"webhooks"`
	}
	admissionWebhook struct {
		Name                    string                     `json:"name"`
		ClientConfig            webhook.ClientConfig       `json:"clientConfig"`
		Rules                   []resourceRule             `json:"rules"`
		FailurePolicy           *string                    `json:"failurePolicy"`
		MatchPolicy             string                     `json:"matchPolicy"`
		NamespaceSelector       *metav1.LabelSelector      `json:"namespaceSelector"`
		ObjectSelector          *metav1.LabelSelector      `json:"objectSelector"`
		SideEffects             *string                    `json:"sideEffects"`
		TimeoutSeconds          *int32                     `json:"timeoutSeconds"`
		AdmissionReviewVersions []string                   `json:"admissionReviewVersions"`
		MatchConditions         []celtypes.NamedExpression `json:"matchConditions"`
		ReinvocationPolicy      *string                    `json:"reinvocationPolicy"`
	}
)

func (h *admissionWebhook) ignoresFailures() bool {
	return h.FailurePolicy != nil && *h.FailurePolicy == "Ignore"
}

// hookCall is a webhook that matches a request, and the request as the
// webhook sees it (its kind, resource and objects in the version it
// matched).
type hookCall struct {
	config string
	hook   *admissionWebhook
	a      *attributes
	// managedFields, if set, are the object's in the review: an update's
	// as the field manager recorded them before mutating admission.
	managedFields any
}

// matchingWebhooks are the webhooks of configs that match the request a
// describes, in kube-apiserver's order. A match condition that fails to
// evaluate, under failurePolicy Fail, is the request's error.
func (s *admission) matchingWebhooks(ctx context.Context, configs []webhookConfiguration, a *attributes) ([]hookCall, error) {
	var calls []hookCall
	for _, c := range configs {
		for i := range c.Webhooks {
			h := &c.Webhooks[i]
			m := &matchResources{MatchPolicy: h.MatchPolicy, NamespaceSelector: h.NamespaceSelector, ObjectSelector: h.ObjectSelector, ResourceRules: h.Rules}
			res := a.match(m, false)
			if res == nil {
				continue
			}
			call := hookCall{config: c.Metadata.Name, hook: h, a: a.as(res)}
			ok, err := s.matchConditionsHold(ctx, call)
			if err != nil {
				return nil, err
			}
			if ok {
				calls = append(calls, call)
			}
		}
	}
	return calls, nil
}

// matchedMarker is the message of the one validation of the policy a
// webhook's matchConditions are evaluated as: the policy returns it only
// when every condition holds.
const matchedMarker = "matched"

// matchConditionsHold evaluates a webhook's matchConditions (all must
// hold) with the CEL machinery of ValidatingAdmissionPolicy: as a policy
// of those conditions and one validation that always fails.
func (s *admission) matchConditionsHold(ctx context.Context, call hookCall) (bool, error) {
	h := call.hook
	if len(h.MatchConditions) == 0 {
		return true, nil
	}
	program, err := celeval.CompilePolicy(ctx, celtypes.Policy{MatchConditions: h.MatchConditions,
		Validations: []celtypes.Validation{{Expression: "false", Message: matchedMarker}}, Fail: !h.ignoresFailures()})
	if err != nil {
		return false, err
	}
	a := call.a
	out, err := program.Evaluate(ctx, celtypes.PolicyInput{Object: a.vars["object"], OldObject: a.vars["oldObject"],
		Request: a.vars["request"], RequestResource: a.requestResource}, a.authorizer)
	switch {
	case err != nil:
		return false, err
	case out.Message == matchedMarker:
		return true, nil
	case out.Message == "":
		return false, nil
	}
	return false, apierrors.NewForbidden(a.req.res.GroupResource(), str(metadata(a.subject), "name"), errors.New(out.Message))
}

// versioned is o as the webhook of call sees it: in the version it matched.
func (call hookCall) versioned(o object) object {
	if o == nil || call.a.res == call.a.req.res {
		return o
	}
	out := toStorage(call.a.req.res, deepCopyObject(o))
	fromStorage(call.a.res, out)
	return out
}

// call sends the AdmissionReview of call's request to its webhook and
// returns its answer, or the error that fails the request: a denial, or a
// failed call under failurePolicy Fail (a failed call it ignores is a nil
// answer).
func (s *admission) callWebhook(ctx context.Context, call hookCall, mutating, dryRun bool) (*webhook.Response, error) {
	resp, err := s.postReview(ctx, call, mutating, dryRun)
	var failed *webhook.CallError
	if errors.As(err, &failed) {
		if call.hook.ignoresFailures() {
			return nil, nil
		}
		return nil, apierrors.NewInternalError(err)
	}
	return resp, err
}

func (s *admission) postReview(ctx context.Context, call hookCall, mutating, dryRun bool) (*webhook.Response, error) {
	h := call.hook
	if dryRun {
		switch {
		case h.SideEffects == nil:
			return nil, &webhook.CallError{Webhook: h.Name, Reason: errors.New("Webhook SideEffects is nil")}
		case *h.SideEffects != "None" && *h.SideEffects != "NoneOnDryRun":
			return nil, webhook.DryRunUnsupported(h.Name)
		}
	}
	version, err := webhook.ReviewVersion(h.Name, h.AdmissionReviewVersions)
	if err != nil {
		return nil, err
	}
	uid := string(uuid.NewUUID())
	request := maps.Clone(call.a.vars["request"].(map[string]any))
	request["uid"] = uid
	object := call.versioned(call.a.obj)
	if call.managedFields != nil && object != nil {
		object = maps.Clone(object)
		md := maps.Clone(metadata(object))
		md["managedFields"] = call.managedFields
		object["metadata"] = md
	}
	request["object"], request["oldObject"] = object, call.versioned(call.a.old)
	body, err := json.Marshal(map[string]any{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/" + version, "request": request})
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	endpoint, err := s.endpointOf(h.Name, h.ClientConfig)
	if err != nil {
		return nil, err
	}
	timeout := webhook.DefaultTimeout
	if h.TimeoutSeconds != nil {
		timeout = time.Duration(*h.TimeoutSeconds) * time.Second
	}
	answer, err := webhook.Post(ctx, endpoint, timeout, body)
	if err != nil {
		return nil, &webhook.CallError{Webhook: h.Name, Reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	resp, err := webhook.VerifyResponse(h.Name, version, uid, mutating, answer)
	if err != nil {
		return nil, err
	}
	warn(ctx, resp.Warnings...)
	if !resp.Allowed {
		return nil, webhook.Denied(h.Name, resp.Result)
	}
	return resp, nil
}

// admitMutatingWebhooks is the MutatingAdmissionWebhook plugin on a create
// (old nil), an update or a delete (obj nil): each matching webhook is
// called in turn on the object as the ones before it left it, its JSON
// patch applied. When a webhook changed the object, those called before it
// with reinvocationPolicy IfNeeded are called once more, after the others.
// It returns a copy of obj as it came when a webhook changed it (nil when
// none did): kube-apiserver records managedFields before this plugin, so
// the webhooks' changes are nobody's. On an update, managedFields (nil:
// obj's own) gives the managedFields the webhooks see: those the request
// will record.
func (s *admission) admitMutatingWebhooks(ctx context.Context, req *request, obj, old object, dryRun bool, managedFields func() (any, error)) (object, error) {
	if req.res.Group == "admissionregistration.k8s.io" {
		return nil, nil
	}
	configs, _, err := listDecoded[webhookConfiguration](ctx, s, mutatingWebhooksGVR)
	if err != nil || len(configs) == 0 {
		return nil, err
	}
	var unmutated object
	rec := audit.FromContext(ctx)
	stage := audit.Stage{Phase: audit.Mutating, Plugin: "MutatingAdmissionWebhook"}
	called := false
	var seenManagedFields any
	// Webhooks are named by configuration and name for reinvocation.
	invokedReinvocable, reinvoke := map[string]bool{}, map[string]bool{}
	for round := 0; round < 2; round++ {
		if round == 1 && len(reinvoke) == 0 {
			break
		}
		a, err := s.newAttributes(ctx, req, obj, old, dryRun)
		if err != nil {
			return nil, err
		}
		calls, err := s.matchingWebhooks(ctx, configs, a)
		if err != nil {
			return nil, rec.Ran(stage, err)
		}
		for i := 0; i < len(calls); i++ {
			call := calls[i]
			key := call.config + "/" + call.hook.Name
			if round == 1 && !reinvoke[key] {
				continue
			}
			if !called && managedFields != nil {
				// Once, before any webhook changed obj.
				if seenManagedFields, err = managedFields(); err != nil {
					return nil, err
				}
			}
			called = true
			call.managedFields = seenManagedFields
			resp, err := s.callWebhook(ctx, call, true, dryRun)
			if err != nil {
				return nil, rec.Ran(stage, err)
			}
			if resp != nil {
				s.annotateWebhook(ctx, call, resp)
			}
			var changed bool
			if resp != nil && len(resp.Patch) > 0 {
				if unmutated == nil && obj != nil {
					unmutated = deepCopyObject(obj)
				}
				if changed, err = s.applyWebhookPatch(ctx, call, obj, resp.Patch); err != nil {
					return nil, rec.Ran(stage, err)
				}
			}
			if changed {
				reinvoke = maps.Clone(invokedReinvocable)
				// The webhooks after this one see the object it made.
				if a, err = s.newAttributes(ctx, req, obj, old, dryRun); err != nil {
					return nil, err
				}
				for j := i + 1; j < len(calls); j++ {
					calls[j].a = a.as(calls[j].a.res)
				}
			}
			if round == 0 && call.hook.ReinvocationPolicy != nil && *call.hook.ReinvocationPolicy == "IfNeeded" {
				invokedReinvocable[key] = true
			}
		}
		if unmutated == nil {
			break
		}
	}
	if called {
		rec.Ran(stage, nil)
	}
	if unmutated != nil && reflect.DeepEqual(unmutated, obj) {
		unmutated = nil
	}
	return unmutated, nil
}

// admitMutatingView is the MutatingAdmissionWebhook plugin on a write
// through a view of the object, as kube-apiserver runs it on /scale: the
// webhooks see the views (autoscaling/v1 Scales) of obj and live, and what
// their patches leave in the new view is written back into obj.
func (s *admission) admitMutatingView(ctx context.Context, wr *write, obj, live object) error {
	view := wr.view(obj)
	unmutated, err := s.admitMutatingWebhooks(ctx, wr.request, view, wr.view(live), wr.dryRun, nil)
	if err != nil || unmutated == nil {
		return err
	}
	wr.fromView(obj, view)
	return nil
}

// applyWebhookPatch applies a webhook's JSON patch to obj, in place (in the
// version the webhook saw, then back), defaulted and, for custom objects,
// pruned and checked against their schema again; it reports whether obj
// changed.
func (s *admission) applyWebhookPatch(ctx context.Context, call hookCall, obj object, patch []byte) (bool, error) {
	name := call.hook.Name
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return false, apierrors.NewInternalError(&webhook.CallError{Webhook: name, Reason: fmt.Errorf("received undecodable patch in webhook response: %w", err)})
	}
	if len(ops) == 0 {
		return false, nil
	}
	if obj == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", name))
	}
	seen := call.versioned(obj)
	doc, err := encoding.MarshalObject(seen)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	patched, err := ops.Apply(doc)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	out, err := encoding.DecodeObject(encoding.JSON, patched)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	before, err := encoding.DecodeObject(encoding.JSON, doc)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if reflect.DeepEqual(before, out) {
		return false, nil
	}
	if call.a.req.subresource == "scale" {
		// A Scale: typed as one, and nothing of its object's type applies.
		if out, err = asTyped(scaleKind, out); err != nil {
			return false, err
		}
		replaceObject(obj, out)
		return true, nil
	}
	if call.a.res != call.a.req.res {
		out = toStorage(call.a.res, out)
		fromStorage(call.a.req.res, out)
	}
	if call.a.req.res.Custom == nil {
		// Decoded into the type's Go object: canonical quantities.
		if out, err = asTyped(call.a.req.res, out); err != nil {
			return false, err
		}
	}
	replaceObject(obj, out)
	if err := call.a.req.store.applyDefaults(obj); err != nil {
		return false, err
	}
	// The type's admission again (a custom object's schema): what a
	// webhook adds that the schema does not know is dropped silently, the
	// request did not send it.
	quiet := *call.a.req
	quiet.fieldValidation = "Ignore"
	if admit := call.a.req.store.strategy.admit; admit != nil {
		return true, admit(s.registry, ctx, &quiet, obj, call.a.old)
	}
	return true, nil
}

// replaceObject makes obj hold what with holds, keeping its metadata map
// (which callers may hold).
func replaceObject(obj, with object) {
	md := metadata(obj)
	clear(md)
	maps.Copy(md, metadata(with))
	with["metadata"] = md
	clear(obj)
	maps.Copy(obj, with)
}

// admitValidatingWebhooks is the ValidatingAdmissionWebhook plugin on a
// create (old nil), an update or a delete (obj nil): the matching webhooks
// are called together; the first (in order) that denies or fails under
// failurePolicy Fail fails the request, with the warnings of all.
func (s *admission) admitValidatingWebhooks(ctx context.Context, req *request, obj, old object, dryRun bool) error {
	if req.res.Group == "admissionregistration.k8s.io" {
		return nil
	}
	configs, _, err := listDecoded[webhookConfiguration](ctx, s, validatingWebhooksGVR)
	if err != nil || len(configs) == 0 {
		return err
	}
	rec := audit.FromContext(ctx)
	stage := audit.Stage{Phase: audit.Validating, Plugin: "ValidatingAdmissionWebhook"}
	a, err := s.newAttributes(ctx, req, obj, old, dryRun)
	if err != nil {
		return err
	}
	calls, err := s.matchingWebhooks(ctx, configs, a)
	if err != nil {
		return rec.Ran(stage, err)
	}
	if len(calls) == 0 {
		return nil
	}
	errs := make([]error, len(calls))
	answers := make([]*webhook.Response, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { answers[i], errs[i] = s.callWebhook(ctx, call, false, dryRun) })
	}
	wg.Wait()
	for i, resp := range answers {
		if resp != nil {
			s.annotateWebhook(ctx, calls[i], resp)
		}
	}
	return rec.Ran(stage, firstError(errs))
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// annotateWebhook records a webhook's audit annotations, as
// "<webhook>/<key>".
func (s *admission) annotateWebhook(ctx context.Context, call hookCall, resp *webhook.Response) {
	rec := audit.FromContext(ctx)
	for k, v := range resp.AuditAnnotations {
		rec.Annotate(call.hook.Name+"/"+k, v)
	}
}

// endpointOf is where the webhook name configured by cc is called.
func (s *registry) endpointOf(name string, cc webhook.ClientConfig) (webhook.Endpoint, error) {
	e, err := webhook.EndpointOf(name, cc, s.resolveService)
	if s.noWebhookCalls {
		e.Unreachable = webhook.ErrCallsOff
	}
	return e, err
}

// resolveService is the address a webhook's service port reaches: an
// ExternalName Service's host, else one of the ready endpoints its
// EndpointSlices list (as kube-apiserver resolves with
// --enable-aggregator-routing). A Service's clusterIP is not tried: no
// proxy makes kubeplay's simulated addresses reach anything.
func (s *registry) resolveService(ctx context.Context, namespace, name string, port int32) (string, error) {
	svcRes := catalog.LookupBuiltin(servicesGVR)
	svc, _, err := s.getObject(ctx, svcRes, namespace, name)
	if apierrors.IsNotFound(err) {
		return "", apierrors.NewNotFound(schema.GroupResource{Resource: "service"}, name)
	}
	if err != nil {
		return "", err
	}
	spec := jsonmap.Child(svc, "spec")
	switch t := str(spec, "type"); t {
	case "", "ClusterIP", "LoadBalancer", "NodePort":
	case "ExternalName":
		// The host it names, at the webhook's port, as kube-apiserver
		// resolves it: how a process outside the cluster (on loopback,
		// which no EndpointSlice may list) is called by service.
		return net.JoinHostPort(str(spec, "externalName"), strconv.Itoa(int(port))), nil
	default:
		return "", fmt.Errorf("unsupported service type %q", t)
	}
	portName, found := "", false
	for _, p := range jsonmap.Items(spec["ports"]) {
		if n, ok := jsonmap.IntOf(p["port"]); ok && n == int64(port) {
			portName, found = str(p, "name"), true
			break
		}
	}
	if !found {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, name))
	}
	res := catalog.LookupBuiltin(endpointSlicesGVR)
	list, err := s.store.List(ctx, collectionPrefix(res, namespace), "", 0, 0)
	if err != nil {
		return "", storeError(res, "", err)
	}
	for _, kv := range list.Items {
		slice, err := decodeStored(res, kv)
		if err != nil {
			return "", apierrors.NewInternalError(err)
		}
		if str(jsonmap.Child(metadata(slice), "labels"), "kubernetes.io/service-name") != name {
			continue
		}
		for _, p := range jsonmap.Items(slice["ports"]) {
			// A port without a name is no service port's.
			if n, ok := p["name"].(string); !ok || n != portName || p["port"] == nil {
				continue
			}
			for _, ep := range jsonmap.Items(slice["endpoints"]) {
				ready, ok := jsonmap.Child(ep, "conditions")["ready"].(bool)
				addresses, _ := ep["addresses"].([]any)
				if ok && !ready || len(addresses) == 0 {
					continue
				}
				ip, _ := addresses[0].(string)
				n, _ := jsonmap.IntOf(p["port"])
				return net.JoinHostPort(ip, strconv.FormatInt(n, 10)), nil
			}
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
}
