# The two commands a newcomer needs are `make run` and `make test`; see README.md.
SECONDS ?= 30

.PHONY: run test cluster build release package bench bench-calendar bench-worker bench-usage bench-member bench-newcomer reliability contract stop-db

run:        ## Serve the portal on the embedded default (local PostgreSQL, demo data)
	bash .ci/run-portal.sh

test:       ## Run every test (Rust + browser), with a throwaway PostgreSQL
	bash .ci/test.sh

cluster:    ## A real Kubernetes API server with deploy/ applied; prints the KUBECONFIG for `make run`
	bash .ci/cluster.sh

build:      ## Build the server and the site (debug)
	bash .ci/build-site.sh dev

release:    ## Build the server and the site (release)
	bash .ci/build-site.sh release

package:    ## Stage the container image's files (release build) in target/package; see Containerfile
	bash .ci/package.sh release

bench:      ## Booking load benchmark against pgbench on the same PostgreSQL; booking and finding free time through MCP beside REST
	bash .ci/bench.sh $(SECONDS)

bench-calendar: ## WASM size, week-view render time with 500 bookings, bytes on the wire, time to interactive
	bash .ci/bench-calendar.sh

bench-worker: ## Worker: requests per converged pass, start latency, 200 sessions at once
	bash .ci/bench-worker.sh

bench-usage: ## Reports over a year (100k bookings) and the sampler with 1 and 1 000 sessions
	bash .ci/bench-usage.sh

bench-member: ## What row security costs a member cluster's worker: its writes as the owner and as its own role
	bash .ci/bench-member-rows.sh

bench-newcomer: ## A fresh clone's make run, a one-line change served again (TEST=1: make test), against a fixed reference build
	bash .ci/bench-newcomer.sh

reliability: ## Load with a history check, a database restart mid-load, OIDC refusals, abusive clients: one table
	bash .ci/reliability.sh

contract:   ## Fuzz the API against its OpenAPI document with schemathesis (every check, user and admin)
	bash .ci/contract.sh

stop-db:    ## Stop the embedded PostgreSQL that `make run` started
	bash .ci/stop-db.sh
