// state.js: a sandbox's state as something small enough to share — the
// objects a learner made, not the SQLite file. A permalink carries it in its
// fragment (#st=<encoded> on embed.html, #state=<encoded> on index.html),
// deflated and base64url-encoded as scripts are (script.js); a state whose
// encoding is longer than urlLimit goes into a file instead (fileType).
//
// What it keeps: every object of every resource that can be listed and
// created, except the ones the sandbox made itself (the system namespaces and
// the RBAC bootstrap policy, which no client manages: see own) and the ones a
// controller made for another object kept (they come back as the controller
// runs again); their metadata (labels, annotations, finalizers,
// ownerReferences, managedFields: who owns which field survives), their spec
// or data, and whether they were being deleted. What it drops: status,
// uids, resourceVersions, timestamps other than managedFields' own — a
// restored object is a new object with the same content and owners.

import kubeplay from "./kubeplay.js";
import * as script from "./script.js";

// urlLimit is the longest encoded state a permalink carries: URLs this long
// still pass browsers, chat tools and web servers' request-line limits.
export const urlLimit = 8 * 1024;

// fileType is the media type of a state saved as a file.
export const fileType = "application/vnd.kubeplay.state+json";

// restoreManager is the field manager of the requests restore makes; the
// managedFields restored replace its entries.
const restoreManager = "kubeplay-restore";

const discoveryAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

// share captures the state and shows in el a permalink to it, made by
// linkFor(encoded state), or, when the state is longer than urlLimit, the
// state as a file to download (for the full playground's Upload snapshot).
// describe(n) says what the link holds ("this script and its 3 objects").
export async function share(el, linkFor, describe) {
	const st = await capture();
	const encoded = await encode(st);
	const n = st.objects.length;
	el.replaceChildren();
	el.hidden = false;
	if (encoded.length <= urlLimit) {
		const a = Object.assign(document.createElement("a"), { href: linkFor(encoded), target: "_blank", className: "kp-permalink-url" });
		a.textContent = "this link";
		el.append(`Permalink to ${describe(n)}: `, a, ` (${encoded.length} characters).`);
		await navigator.clipboard?.writeText(a.href).then(() => el.append(" Copied."), () => {});
		return;
	}
	const file = new Blob([JSON.stringify(st)], { type: fileType });
	const a = Object.assign(document.createElement("a"), { href: URL.createObjectURL(file), download: "kubeplay-state.json", className: "kp-state-file" });
	a.textContent = "Download them";
	el.append(`These ${n} objects are too many for a link (${(encoded.length / 1024).toFixed(1)} KB encoded; a link carries ${urlLimit / 1024} KB at most). `, a, " and load the file with Upload snapshot in the full playground.");
}

// encode and decode turn a state into a URL fragment's value and back.
// objects says "1 object", "3 objects".
export const objects = (n) => `${n} object${n === 1 ? "" : "s"}`;

export const encode = (state) => script.encode(JSON.stringify(state));
export const decode = async (s) => JSON.parse(await script.decode(s));

// capture returns the sandbox's state: {objects: [{resource, object}]}, with
// resource the object's resource in its apiVersion ("configmaps").
export async function capture() {
	const found = []; // {resource, object}
	for (const { resource, kind, apiVersion } of await resources()) {
		const list = await json(await kubeplay.fetch(`/${prefix(apiVersion)}/${resource}`));
		for (const o of list.items ?? []) found.push({ resource, object: { apiVersion, kind, ...o } });
	}
	const uids = new Set(found.filter((f) => !own(f.object)).map((f) => f.object.metadata.uid));
	const kept = found.filter((f) => !own(f.object) && !controlledBy(f.object, uids));
	// Owners keep their uid, so that restore can point their dependents at
	// the new one.
	const owners = new Set(kept.flatMap((f) => (f.object.metadata.ownerReferences ?? []).map((r) => r.uid)));
	return { objects: kept.map(({ resource, object }) => ({ resource, object: strip(object, owners) })) };
}

// resources lists the resources whose objects capture keeps: listable and
// creatable, in their group's preferred version, namespaces and custom
// resource definitions first (restore creates in this order).
async function resources() {
	const out = [];
	for (const path of ["/api", "/apis"]) {
		const groups = await json(await kubeplay.fetch(path, { headers: { Accept: discoveryAccept } }));
		for (const g of groups.items ?? []) {
			const v = g.versions?.[0]; // the preferred version comes first
			if (!v) continue;
			const apiVersion = g.metadata?.name ? `${g.metadata.name}/${v.version}` : v.version;
			for (const r of v.resources ?? []) {
				if (r.verbs?.includes("list") && r.verbs.includes("create") && r.responseKind?.kind) {
					out.push({ resource: r.resource, kind: r.responseKind.kind, apiVersion });
				}
			}
		}
	}
	const rank = (r) => (r.resource === "namespaces" && r.apiVersion === "v1" ? 0 : r.resource === "customresourcedefinitions" ? 1 : 2);
	return out.sort((a, b) => rank(a) - rank(b));
}

// systemManagers are the field managers of what the sandbox does by itself:
// the API server's bootstrap (its API Priority and Fairness configuration
// and its default ServiceCIDR's status by managers of their own), what a new
// sandbox installs (the default
// StorageClass, playground/sandbox.go's installerAgent; kubeadm's add-ons,
// playground/kubesystem.go's kubeadmAgent), the controllers
// (the cluster role aggregation updates admin, edit and view) and the
// simulated nodes, their kubelets and the scheduler (Nodes, Leases, Events).
const systemManagers = new Set(["kube-apiserver", "kube-controller-manager", "kubeplay-cluster-setup", "kubeadm", "kubelet", "kube-scheduler",
	"api-priority-and-fairness-config-producer-v1", "api-priority-and-fairness-config-consumer-v1", "kubernetes-service-cidr-controller"]);

// own reports whether the sandbox made o itself: managed by no client (the
// RBAC bootstrap policy has no managedFields at all).
const own = (o) => (o.metadata.managedFields ?? []).every((m) => systemManagers.has(m.manager));

// controlledBy reports whether o's controller is one of uids.
const controlledBy = (o, uids) => (o.metadata.ownerReferences ?? []).some((r) => r.controller && uids.has(r.uid));

const prefix = (apiVersion) => (apiVersion.includes("/") ? "apis/" + apiVersion : "api/" + apiVersion);

// strip keeps what restore needs of o.
function strip(o, owners) {
	const { uid, resourceVersion, creationTimestamp, generation, selfLink, deletionTimestamp, deletionGracePeriodSeconds, managedFields, ...meta } = o.metadata;
	const { status, metadata, ...rest } = o;
	const out = { ...rest, metadata: meta };
	if (owners.has(uid)) meta.uid = uid;
	// Status is not restored, so neither is who owned it.
	const fields = (managedFields ?? []).filter((m) => m.subresource !== "status");
	if (fields.length) meta.managedFields = fields;
	if (deletionTimestamp) out.deleting = true;
	return out;
}

// restore creates state's objects in the sandbox, with their managedFields,
// then deletes those that were being deleted (their finalizers hold them, as
// before). onProgress(done, total) follows it. It returns the problems, one
// message per object that could not be restored.
export async function restore(state, onProgress = () => {}) {
	const todo = [...(state.objects ?? [])];
	const uids = new Map(); // old uid -> new
	const deletions = [];
	const problems = [];
	let done = 0;
	// Owners before their dependents: a dependent whose owner is missing
	// would be collected at once.
	for (let pass = 0; todo.length && pass < 10; pass++) {
		const wanted = new Set(todo.map((t) => t.object.metadata.uid).filter(Boolean));
		for (const item of todo.splice(0)) {
			const refs = item.object.metadata.ownerReferences ?? [];
			if (pass < 9 && refs.some((r) => wanted.has(r.uid) && !uids.has(r.uid))) {
				todo.push(item);
				continue;
			}
			try {
				const deleting = await restoreOne(item, uids);
				if (deleting) deletions.push(deleting);
			} catch (err) {
				problems.push(`${item.resource} ${item.object.metadata.name}: ${err.message}`);
			}
			onProgress(++done, state.objects.length);
		}
	}
	// Namespaces last: deleting one deletes what it holds.
	deletions.sort((a, b) => (a.namespace ? 1 : 0) - (b.namespace ? 1 : 0));
	for (const d of deletions) {
		const res = await kubeplay.fetch(d.path + (d.policy ? `?propagationPolicy=${d.policy}` : ""), { method: "DELETE" });
		await res.arrayBuffer();
		if (!res.ok && res.status !== 404) problems.push(`deleting ${d.path}: HTTP ${res.status}`);
	}
	return problems;
}

// restoreOne creates one object (or replaces one of the same name the
// sandbox made, a system namespace a learner labelled), sets its
// managedFields and returns its deletion to make, if it was being deleted.
async function restoreOne({ resource, object }, uids) {
	const { deleting, ...o } = object;
	const { uid, managedFields, ...meta } = o.metadata;
	const body = { ...o, metadata: meta };
	if (meta.ownerReferences) meta.ownerReferences = meta.ownerReferences.map((r) => ({ ...r, uid: uids.get(r.uid) ?? r.uid }));
	const base = `/${prefix(o.apiVersion)}/${meta.namespace ? `namespaces/${meta.namespace}/` : ""}${resource}`;
	const path = `${base}/${encodeURIComponent(meta.name)}`;
	let res = await send("POST", `${base}?fieldManager=${restoreManager}`, body);
	if (res.status === 409) {
		const live = await json(await kubeplay.fetch(path));
		body.metadata = { ...meta, resourceVersion: live.metadata.resourceVersion };
		res = await send("PUT", `${path}?fieldManager=${restoreManager}`, body);
	}
	const created = await json(res);
	if (uid) uids.set(uid, created.metadata.uid);
	if (managedFields) await json(await send("PATCH", path, { metadata: { managedFields } }, "application/merge-patch+json"));
	if (!deleting) return null;
	const finalizers = meta.finalizers ?? [];
	const policy = finalizers.includes("foregroundDeletion") ? "Foreground" : finalizers.includes("orphan") ? "Orphan" : "";
	return { path, policy, namespace: resource === "namespaces" && o.apiVersion === "v1" };
}

// send makes a request with a JSON body; a custom resource whose definition
// was just created may take a moment to be served, so a create's 404 is
// retried for a second.
async function send(method, path, body, type = "application/json") {
	for (let attempt = 0; ; attempt++) {
		const res = await kubeplay.fetch(path, { method, headers: { "Content-Type": type }, body: JSON.stringify(body) });
		if (res.status !== 404 || method !== "POST" || attempt >= 10) return res;
		await res.arrayBuffer();
		await new Promise((r) => setTimeout(r, 100));
	}
}

// json returns res's JSON body, or throws the API's message.
async function json(res) {
	const text = await res.text();
	let body = null;
	try {
		body = JSON.parse(text);
	} catch {}
	if (!res.ok) throw new Error(body?.message ?? `HTTP ${res.status}`);
	return body;
}
