// Package controller is the example project's reconciler: each Widget gets a
// ConfigMap it owns (deleted with it by the garbage collector), and a
// finalizer that leaves a tombstone ConfigMap when the Widget is deleted.
// Its envtest suite (suite_test.go) runs on kubeplay's kube-apiserver; a
// validating webhook for Widgets, served by the manager and installed by
// envtest's WebhookInstallOptions, is the next thing to show.
package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	examplev1 "kubeplay/examples/envtest/api/v1"
)

// Finalizer holds a Widget until its tombstone is written.
const Finalizer = "example.kubeplay.dev/tombstone"

// WidgetReconciler keeps each Widget's ConfigMap.
type WidgetReconciler struct {
	client.Client
}

// SetupWithManager registers the reconciler with mgr.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&examplev1.Widget{}).Owns(&corev1.ConfigMap{}).Complete(r)
}

// ConfigMapName is the name of the ConfigMap a Widget owns.
func ConfigMapName(widget string) string { return widget + "-data" }

// TombstoneName is the name of the ConfigMap left when a Widget is deleted.
func TombstoneName(widget string) string { return widget + "-tombstone" }

// Reconcile brings one Widget's ConfigMap in line with it.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w examplev1.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&w, Finalizer) {
			return ctrl.Result{}, nil
		}
		tombstone := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: TombstoneName(w.Name)},
			Data:       map[string]string{"uid": string(w.UID)},
		}
		// In a namespace being deleted nothing can be created, nor needs to.
		err := r.Create(ctx, tombstone)
		if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return ctrl.Result{}, err
		}
		controllerutil.RemoveFinalizer(&w, Finalizer)
		return ctrl.Result{}, r.Update(ctx, &w)
	}
	if controllerutil.AddFinalizer(&w, Finalizer) {
		if err := r.Update(ctx, &w); err != nil {
			return ctrl.Result{}, err
		}
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: ConfigMapName(w.Name)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = w.Spec.Data
		return controllerutil.SetControllerReference(&w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if w.Status.ConfigMap != cm.Name {
		w.Status.ConfigMap = cm.Name
		if err := r.Status().Update(ctx, &w); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
