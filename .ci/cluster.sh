#!/usr/bin/env bash
# `make cluster`: a real Kubernetes API server (etcd, kube-apiserver and
# kube-controller-manager v1.36, no scheduler, no kubelet) with the CRDs and
# deploy/ applied, kept in .data/cluster until Ctrl-C. `make run` with the
# printed KUBECONFIG provisions sessions there as deploy/'s berth-worker.
# `make cluster CLUSTERS=2` starts a second one (.data/cluster-east) with
# deploy/overlays/member, as a member of the first: its berth-worker's
# kubeconfig is the Secret east-kubeconfig in the first one's berth-clusters
# namespace, for a hub. Each cluster's workspace domain is the one its own
# berth-config guards (the worker publishes under no other).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
DIR="$ROOT/.data/cluster"
EAST="$ROOT/.data/cluster-east"
bash .ci/kube-stack.sh stop "$DIR"
bash .ci/kube-stack.sh stop "$EAST"
start_stack() {
  local status=0
  BERTH_KEEP_STACK=1 bash .ci/kube-stack.sh start "$1" $$ "${2:-kubernetes}" || status=$?
  if [ "$status" = 3 ]; then
    echo "make cluster needs ../shared/envtest beside this checkout, or KUBEBUILDER_ASSETS naming a folder with" >&2
    echo "etcd, kube-apiserver and kube-controller-manager (setup-envtest use 1.36 -p path gives the first two)." >&2
  fi
  [ "$status" = 0 ] || exit "$status"
}
say "starting a real Kubernetes API server with deploy/ applied (about 10 s)"
start_stack "$DIR"
trap 'bash .ci/kube-stack.sh stop "$DIR"; bash .ci/kube-stack.sh stop "$EAST"; exit 0' INT TERM
if [ "${CLUSTERS:-1}" = 2 ]; then
  say "starting a second one, east, as a member of the first (about 10 s)"
  start_stack "$EAST" member
  # The hub's side (deploy/overlays/hub): the namespace of member kubeconfigs
  # its worker may read, and east's berth-worker kubeconfig in it.
  KUBECONFIG="$DIR/admin.kubeconfig" kubectl apply -f deploy/overlays/hub/kubeconfigs.yaml >/dev/null
  KUBECONFIG="$DIR/admin.kubeconfig" kubectl -n berth-clusters create secret generic east-kubeconfig \
    --from-file=kubeconfig="$EAST/worker.kubeconfig" >/dev/null
  cat <<MSG

  A second API server, east, listens on https://127.0.0.1:$(cat "$EAST/api-port"), deploy/ applied.
  Its berth-worker kubeconfig is the Secret east-kubeconfig in the first one's berth-clusters namespace.
  Run the portal as the hub (BERTH_HUB=true), then add east on the Clusters page
  (reached through "a kubeconfig Secret", east-kubeconfig, workspace domain
  gpu-east.example.org: the one east's berth-config guards) and put a pool on it:
    KUBECONFIG=$DIR/worker.kubeconfig BERTH_WORKSPACE_DOMAIN=berth.example.org BERTH_HUB=true make run
MSG
fi
cat <<MSG

  A real Kubernetes API server listens on https://127.0.0.1:$(cat "$DIR/api-port"), with deploy/ applied.
  In another terminal, the portal provisions there as deploy/'s berth-worker ServiceAccount,
  under the workspace domain deploy/'s berth-config guards:
    KUBECONFIG=$DIR/worker.kubeconfig BERTH_WORKSPACE_DOMAIN=berth.example.org make run
  Look around as admin:
    KUBECONFIG=$DIR/admin.kubeconfig kubectl get namespaces -l app.kubernetes.io/managed-by=berth
  It has no scheduler and no nodes: workspaces wait, and the booking says why.
  Logs: $DIR/logs. Stop with Ctrl-C.

MSG
while sleep 3600; do :; done
