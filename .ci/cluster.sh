#!/usr/bin/env bash
# `make cluster`: a real Kubernetes API server (etcd, kube-apiserver and
# kube-controller-manager v1.36, no scheduler, no kubelet) with the CRDs and
# deploy/ applied, kept in .data/cluster until Ctrl-C. `make run` with the
# printed KUBECONFIG provisions sessions there as deploy/'s berth-worker.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
DIR="$ROOT/.data/cluster"
bash .ci/kube-stack.sh stop "$DIR"
say "starting a real Kubernetes API server with deploy/ applied (about 10 s)"
status=0
BERTH_KEEP_STACK=1 bash .ci/kube-stack.sh start "$DIR" $$ || status=$?
if [ "$status" = 3 ]; then
  echo "make cluster needs ../shared/envtest beside this checkout, or KUBEBUILDER_ASSETS naming a folder with" >&2
  echo "etcd, kube-apiserver and kube-controller-manager (setup-envtest use 1.36 -p path gives the first two)." >&2
fi
[ "$status" = 0 ] || exit "$status"
trap 'bash .ci/kube-stack.sh stop "$DIR"; exit 0' INT TERM
cat <<MSG

  A real Kubernetes API server listens on https://127.0.0.1:$(cat "$DIR/api-port"), with deploy/ applied.
  In another terminal, the portal provisions there as deploy/'s berth-worker ServiceAccount:
    KUBECONFIG=$DIR/worker.kubeconfig make run
  Look around as admin:
    KUBECONFIG=$DIR/admin.kubeconfig kubectl get namespaces -l app.kubernetes.io/managed-by=berth
  It has no scheduler and no nodes: workspaces wait, and the booking says why.
  Logs: $DIR/logs. Stop with Ctrl-C.

MSG
while sleep 3600; do :; done
