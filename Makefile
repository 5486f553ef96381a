# Convenience targets; each is a thin wrapper over an npm script (the README commands are canonical).
.PHONY: install start test generate lint typecheck bench clean

install:
	npm ci

start:
	npm start

test:
	npm test

generate:
	npm run generate

lint:
	npm run lint:spec

typecheck:
	npm run typecheck

bench:
	npm run bench

clean:
	rm -rf .data
