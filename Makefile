# The two commands a newcomer needs are `make run` and `make test`; see README.md.
SECONDS ?= 30

.PHONY: run test build release bench stop-db

run:        ## Serve the portal on the embedded default (local PostgreSQL, demo data)
	bash scripts/run.sh

test:       ## Run every test (Rust + browser), with a throwaway PostgreSQL
	bash scripts/test.sh

build:      ## Build the server and the site (debug)
	bash scripts/build-site.sh dev

release:    ## Build the server and the site (release)
	bash scripts/build-site.sh release

bench:      ## Booking load benchmark against pgbench on the same PostgreSQL
	bash scripts/bench.sh $(SECONDS)

stop-db:    ## Stop the embedded PostgreSQL that `make run` started
	bash scripts/stop-db.sh
