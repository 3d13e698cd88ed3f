module harnessweaver.dev/e2e/authzen-pdp

go 1.26.0

require github.com/cedar-policy/cedar-go v1.9.2

require (
	github.com/go-json-experiment/json v1.27.2 // indirect
	golang.org/x/exp v0.0.0-20220921023135-46d9e7742f1e // indirect
)
