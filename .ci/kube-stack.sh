#!/usr/bin/env bash
# A real Kubernetes API server for tests and `make cluster`: etcd,
# kube-apiserver and kube-controller-manager (v1.36) on free loopback ports,
# with RBAC, ServiceAccount tokens and the default admission chain
# (ResourceQuota and ValidatingAdmissionPolicy among it), the CRDs of a
# cluster running Berth, and deploy/ applied by kustomize.
#
#   kube-stack.sh start DIR [OWNER_PID] [OVERLAY]
#                                         start with deploy/overlays/OVERLAY applied
#                                         (kubernetes, or member: a member cluster
#                                         as shipped); stop again when OWNER_PID exits
#   kube-stack.sh kueue DIR               add the real Kueue controller (as
#                                         ../shared/envtest/kueue-start-and-check.sh runs it)
#   kube-stack.sh stop DIR
#
# DIR receives admin.kubeconfig, worker.kubeconfig (deploy/'s berth-worker
# ServiceAccount), portal.kubeconfig (berth-portal), pki/, logs/ and pids.
# Binaries: each from $KUBEBUILDER_ASSETS when it holds it (the ecosystem's
# convention), otherwise unpacked once from ../shared/envtest into
# target/envtest/ and checked against its SHA256SUMS.
# Exit 3: no binaries on this machine (the caller skips, except under CI=true).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ENVTEST="${BERTH_ENVTEST_DIR:-$ROOT/../shared/envtest}"
KUBECTL="${KUBECTL:-kubectl}"

# binary NAME: the path of NAME, unpacking it into the cache if need be.
binary() {
  local name="$1"
  if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/$name" ]; then
    echo "$KUBEBUILDER_ASSETS/$name"; return
  fi
  [ -f "$ENVTEST/$name.xz" ] || return 3
  local cache="$ROOT/target/envtest" want
  want="$(awk -v n="$name" '$2 == n { print $1 }' "$ENVTEST/SHA256SUMS")"
  if [ ! -x "$cache/$name" ] || [ "$(cat "$cache/$name.sha256" 2>/dev/null)" != "$want" ]; then
    mkdir -p "$cache"
    # A file of this process's own: two stacks starting at once (two test
    # areas) once wrote one partial file together and both failed the check.
    local partial; partial="$(mktemp "$cache/$name.partial.XXXXXX")"
    xz -dc "$ENVTEST/$name.xz" > "$partial"
    local got; got="$(sha256sum "$partial" | awk '{ print $1 }')"
    if [ "$got" != "$want" ]; then
      rm -f "$partial"
      echo "$name from $ENVTEST does not match SHA256SUMS ($got)" >&2; return 1
    fi
    # rename is atomic: the other process's copy is the same file.
    chmod +x "$partial" && mv -f "$partial" "$cache/$name" && echo "$want" > "$cache/$name.sha256"
  fi
  echo "$cache/$name"
}

wait_for() { # SECONDS CMD...
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $end ] && return 1
    sleep 0.2
  done
}

kubeconfig() { # FILE TOKEN
  # Credentials inline, as Berth accepts a member's kubeconfig (no file paths).
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: berth-test
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority-data: "$(base64 -w0 "$DIR/pki/ca.crt")"}
users:
- name: u
  user: {token: "$2"}
contexts:
- name: berth-test
  context: {cluster: berth-test, user: u}
current-context: berth-test
EOF
}

pki() {
  mkdir -p "$DIR/pki" && cd "$DIR/pki"
  openssl genrsa -out ca.key 2048 2>/dev/null
  openssl req -x509 -new -key ca.key -days 30 -subj "/CN=berth-test-ca" -out ca.crt 2>/dev/null
  openssl genrsa -out apiserver.key 2048 2>/dev/null
  openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr 2>/dev/null
  printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
    'extendedKeyUsage=serverAuth' 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc' > apiserver.ext
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile apiserver.ext \
    -out apiserver.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cd "$ROOT"
}

stop() {
  local dir="$1" pid
  [ -f "$dir/pids" ] || return 0
  # Reverse start order: controller manager, API server, etcd.
  for pid in $(tac "$dir/pids"); do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $(tac "$dir/pids"); do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -f "$dir/pids"
}

start() {
  DIR="$(mkdir -p "$1" && cd "$1" && pwd)"
  local owner="${2:-}" etcd apiserver kcm
  if ! etcd="$(binary etcd)" || ! apiserver="$(binary kube-apiserver)" || ! kcm="$(binary kube-controller-manager)"; then
    echo "no Kubernetes test binaries: set KUBEBUILDER_ASSETS (setup-envtest use 1.36 -p path; plus kube-controller-manager) or put ../shared/envtest beside the checkout" >&2
    exit 3
  fi
  rm -rf "$DIR/etcd" "$DIR/logs" && mkdir -p "$DIR/etcd" "$DIR/logs"
  pki
  local admin_token kcm_token
  admin_token="$(openssl rand -hex 16)"; kcm_token="$(openssl rand -hex 16)"
  printf '%s,admin,uid-admin,"system:masters"\n%s,system:kube-controller-manager,uid-kcm\n' \
    "$admin_token" "$kcm_token" > "$DIR/pki/tokens.csv"
  local etcd_port peer_port kcm_port
  etcd_port="$(free_port)"; peer_port="$(free_port)"; API_PORT="$(free_port)"; kcm_port="$(free_port)"
  kubeconfig "$DIR/admin.kubeconfig" "$admin_token"
  kubeconfig "$DIR/kcm.kubeconfig" "$kcm_token"
  export KUBECONFIG="$DIR/admin.kubeconfig"
  : > "$DIR/pids"

  "$etcd" --data-dir="$DIR/etcd" --listen-client-urls="http://127.0.0.1:$etcd_port" \
    --advertise-client-urls="http://127.0.0.1:$etcd_port" --listen-peer-urls="http://127.0.0.1:$peer_port" \
    --unsafe-no-fsync=true --log-level=error > "$DIR/logs/etcd.log" 2>&1 &
  echo $! >> "$DIR/pids"
  watchdog "$owner"
  wait_for 30 curl -sf "http://127.0.0.1:$etcd_port/health" || fail_start etcd
  "$apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
    --secure-port="$API_PORT" --cert-dir="$DIR/apiserver-certs" --tls-cert-file="$DIR/pki/apiserver.crt" \
    --tls-private-key-file="$DIR/pki/apiserver.key" --client-ca-file="$DIR/pki/ca.crt" \
    --token-auth-file="$DIR/pki/tokens.csv" --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$DIR/pki/sa.pub" --service-account-signing-key-file="$DIR/pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --enable-admission-plugins=ResourceQuota --allow-privileged=true \
    --v=1 > "$DIR/logs/kube-apiserver.log" 2>&1 &
  echo $! >> "$DIR/pids"
  wait_for 120 curl -sf --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $admin_token" \
    "https://127.0.0.1:$API_PORT/readyz" || fail_start kube-apiserver

  # CRDs first (deploy/ holds a CloudNativePG Cluster, ServiceMonitors and
  # PrometheusRules), then deploy/ as a platform engineer applies it.
  "$KUBECTL" apply --server-side -f "$ENVTEST/crds" > "$DIR/logs/crds.log" 2>&1 || fail_start "the CRDs"
  # Retried: a CRD just created has no conditions yet, and `kubectl wait` errs on that.
  wait_for 60 "$KUBECTL" wait --for=condition=established --all crd --timeout=5s || fail_start "the CRDs"
  # The controller manager starts once the CRDs are served: its quota
  # controller learns the resources it counts (count/routes.route.openshift.io)
  # at start and otherwise only at its next discovery, up to 30 s later;
  # until then the API server refuses Routes in a session ("status unknown
  # for quota").
  "$kcm" --kubeconfig="$DIR/kcm.kubeconfig" --service-account-private-key-file="$DIR/pki/sa.key" \
    --root-ca-file="$DIR/pki/ca.crt" --cluster-signing-cert-file="$DIR/pki/ca.crt" \
    --cluster-signing-key-file="$DIR/pki/ca.key" --controllers='*' --leader-elect=false \
    --use-service-account-credentials=true --bind-address=127.0.0.1 --secure-port="$kcm_port" \
    --cert-dir="$DIR/kcm-certs" --v=1 > "$DIR/logs/kube-controller-manager.log" 2>&1 &
  echo $! >> "$DIR/pids"
  # deploy/gpu-operator's prerequisite: the GPU Operator's namespace, as its Helm chart makes it.
  "$KUBECTL" create namespace gpu-operator > /dev/null || fail_start "the gpu-operator namespace"
  "$KUBECTL" apply --server-side -k "deploy/overlays/${OVERLAY:-kubernetes}" > "$DIR/logs/deploy.log" 2>&1 || fail_start "deploy/"
  # Ready means the controller manager answers too: namespaces finalize,
  # quotas are counted, every namespace gets its default ServiceAccount.
  wait_for 60 curl -skf "https://127.0.0.1:$kcm_port/healthz" || fail_start kube-controller-manager
  local account
  for account in worker portal; do
    local token
    token="$("$KUBECTL" create token "berth-$account" -n berth --duration=48h)" || fail_start "a token for berth-$account"
    kubeconfig "$DIR/$account.kubeconfig" "$token"
  done
  echo "$API_PORT" > "$DIR/api-port"
}

fail_start() {
  echo "the test Kubernetes stack did not start: $1 (logs in $DIR/logs)" >&2
  tail -n 20 "$DIR"/logs/*.log >&2 || true
  # A full disk stops etcd before it logs a word (CI saw exactly that).
  df -h "$DIR" >&2 || true
  stop "$DIR"
  exit 1
}

# The stack stops when its owner (a test binary, or `make cluster`) exits,
# however it exits: statics are never dropped, and a killed test runs no drop.
watchdog() {
  local owner="$1"
  [ -n "$owner" ] || return 0
  (
    trap '' HUP INT
    while kill -0 "$owner" 2>/dev/null; do sleep 1; done
    stop "$DIR"
    [ -n "${BERTH_KEEP_STACK:-}" ] || rm -rf "$DIR"
  ) < /dev/null > /dev/null 2>&1 &
  disown
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# Kueue out of the cluster, beside a started stack: its webhook server on a
# loopback port with a certificate of the stack's CA, the webhook
# configurations and the CRDs' conversion webhooks pointed at it, leader
# election and internal certificates off. With internal certificates off
# Kueue reads its metrics certificate from a fixed path and exits without
# one, so a test one is written there (kept: every stack may use it).
kueue() {
  DIR="$(cd "$1" && pwd)"; API_PORT="$(cat "$DIR/api-port")"
  export KUBECONFIG="$DIR/admin.kubeconfig"
  local bin; bin="$(binary kueue)" || exit 3
  local webhook_port health_port metrics_port name
  webhook_port="$(free_port)"; health_port="$(free_port)"; metrics_port="$(free_port)"
  mkdir -p "$DIR/kueue-certs" && cd "$DIR/pki"
  for name in kueue-webhook kueue-metrics; do
    openssl genrsa -out "$name.key" 2048 2>/dev/null
    openssl req -new -key "$name.key" -subj "/CN=$name" -out "$name.csr" 2>/dev/null
    printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
      'extendedKeyUsage=serverAuth' 'subjectAltName=IP:127.0.0.1,DNS:localhost' > "$name.ext"
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile "$name.ext" \
      -out "$name.crt" 2>/dev/null
  done
  cp kueue-webhook.crt "$DIR/kueue-certs/tls.crt" && cp kueue-webhook.key "$DIR/kueue-certs/tls.key"
  local metrics=/etc/kueue/metrics/certs
  if [ ! -f "$metrics/tls.crt" ]; then
    mkdir -p "$metrics" && cp kueue-metrics.crt "$metrics/tls.crt" && cp kueue-metrics.key "$metrics/tls.key" \
      || { echo "Kueue needs its metrics certificate in $metrics" >&2; exit 1; }
  fi
  cd "$ROOT"
  "$KUBECTL" create namespace kueue-system > /dev/null 2>&1 || true
  printf '%s\n' 'apiVersion: config.kueue.x-k8s.io/v1beta2' 'kind: Configuration' 'namespace: kueue-system' \
    "health: {healthProbeBindAddress: \"127.0.0.1:$health_port\"}" \
    "metrics: {bindAddress: \"127.0.0.1:$metrics_port\"}" \
    "webhook: {host: 127.0.0.1, port: $webhook_port, certDir: \"$DIR/kueue-certs\"}" \
    'leaderElection: {leaderElect: false}' 'internalCertManagement: {enable: false}' \
    'integrations: {frameworks: [batch/job]}' > "$DIR/kueue-config.yaml"
  # VisibilityOnDemand would start an aggregated API server of its own.
  "$bin" --config="$DIR/kueue-config.yaml" --kubeconfig="$DIR/admin.kubeconfig" \
    --feature-gates=VisibilityOnDemand=false --zap-log-level=2 > "$DIR/logs/kueue.log" 2>&1 &
  echo $! >> "$DIR/pids"
  wait_for 60 curl -sf "http://127.0.0.1:$health_port/readyz" || { tail -n 30 "$DIR/logs/kueue.log" >&2; exit 1; }
  local base="https://127.0.0.1:$webhook_port" ca patch
  ca="$(base64 -w0 "$DIR/pki/ca.crt")"
  patch="{\"spec\":{\"conversion\":{\"strategy\":\"Webhook\",\"webhook\":{\"conversionReviewVersions\":[\"v1\"],\"clientConfig\":{\"url\":\"$base/convert\",\"caBundle\":\"$ca\"}}}}}"
  for name in localqueues clusterqueues cohorts workloads multikueueclusters; do
    "$KUBECTL" patch crd "$name.kueue.x-k8s.io" --type=merge -p "$patch" > /dev/null || exit 1
  done
  sed -e "s#__WEBHOOK_BASE__#$base#g" -e "s#__CA_BUNDLE__#$ca#g" "$ENVTEST/kueue/webhooks.yaml.tmpl" \
    > "$DIR/kueue-webhooks.yaml"
  "$KUBECTL" apply -f "$DIR/kueue-webhooks.yaml" > "$DIR/logs/kueue-webhooks.log" 2>&1 || exit 1
}

case "${1:-}" in
  start) OVERLAY="${4:-kubernetes}" start "$2" "${3:-}" ;;
  kueue) kueue "$2" ;;
  stop) stop "$2" ;;
  *) echo "usage: kube-stack.sh start DIR [OWNER_PID] [OVERLAY] | kueue DIR | stop DIR" >&2; exit 2 ;;
esac
