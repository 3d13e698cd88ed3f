// Command authzen-pdp is a small OpenID AuthZEN 1.0 policy decision point on the Cedar engine
// of cedar-go, for harnessweaver's tests of harnessweaver.authzen (the PEP).
//
// It is an independent Cedar engine (Go, not the Rust build the Python, TypeScript and Rust
// implementations use), so a decision it gives on the request the PEP sent also cross-checks
// the PEP's mapping of events to requests.
//
//	authzen-pdp -policies FILE [-policies FILE ...] [-entities FILE] [-namespace NS]
//	            [-token-env NAME] [-no-batch]
//
// It listens on 127.0.0.1 only, on a port the system chooses, and prints that port as the
// first line of its standard output. It serves
//
//	GET  /.well-known/authzen-configuration  the PDP metadata (AuthZEN 1.0 section 9)
//	POST /access/v1/evaluation               one decision (section 6)
//	POST /access/v1/evaluations              several decisions (section 7), unless -no-batch
//
// An AuthZEN subject, resource or action becomes a Cedar entity uid: the type with its first
// letter upper-cased (user -> User, tool -> Tool, model -> Model; prefixed "NS::" with
// -namespace), the id as it is; the action is Action::"<name>". The context is read with Cedar's
// schemaless JSON rules. With -token-env, every request must carry "Authorization: Bearer
// <the variable's value>" (401 otherwise), so a test can see the PEP sends its credential.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var policies listFlag
	flag.Var(&policies, "policies", "a Cedar policy file (repeat for several; joined in order)")
	entities := flag.String("entities", "", "a Cedar JSON entity list")
	namespace := flag.String("namespace", "", "the Cedar namespace of every entity type")
	tokenEnv := flag.String("token-env", "", "name of an environment variable holding the bearer token required")
	noBatch := flag.Bool("no-batch", false, "serve no batch endpoint (the metadata does not offer it)")
	flag.Parse()

	engine, err := load(policies, *entities, *namespace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "authzen-pdp:", err)
		os.Exit(2)
	}
	token := ""
	if *tokenEnv != "" {
		token = os.Getenv(*tokenEnv)
		if token == "" {
			fmt.Fprintf(os.Stderr, "authzen-pdp: the environment variable %s is empty\n", *tokenEnv)
			os.Exit(2)
		}
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "authzen-pdp:", err)
		os.Exit(2)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	server := &pdp{engine: engine, token: token, batch: !*noBatch, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	// The port first, alone on its line: the tests read it to know where to connect.
	fmt.Println(port)
	if err := http.Serve(listener, server.routes()); err != nil {
		fmt.Fprintln(os.Stderr, "authzen-pdp:", err)
		os.Exit(1)
	}
}
