package main

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
)

type entity struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type action struct {
	Name string `json:"name"`
}

// evaluation is one AuthZEN request, or the defaults and one item of a batch.
type evaluation struct {
	Subject  *entity         `json:"subject,omitempty"`
	Action   *action         `json:"action,omitempty"`
	Resource *entity         `json:"resource,omitempty"`
	Context  json.RawMessage `json:"context,omitempty"`
}

type batch struct {
	evaluation
	Evaluations []evaluation `json:"evaluations"`
	Options     struct {
		Semantic string `json:"evaluations_semantic"`
	} `json:"options"`
}

type decision struct {
	Decision bool           `json:"decision"`
	Context  map[string]any `json:"context,omitempty"`
}

type pdp struct {
	engine *engine
	token  string
	batch  bool
	base   string
}

func (p *pdp) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/authzen-configuration", p.metadata)
	mux.HandleFunc("POST /access/v1/evaluation", p.evaluate)
	if p.batch {
		mux.HandleFunc("POST /access/v1/evaluations", p.evaluateMany)
	}
	return p.authorized(mux)
}

// authorized refuses (401) a request without the bearer token, when one is required.
func (p *pdp) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.token != "" {
			given := r.Header.Get("Authorization")
			if subtle.ConstantTimeCompare([]byte(given), []byte("Bearer "+p.token)) != 1 {
				answer(w, http.StatusUnauthorized, map[string]string{"error": "a bearer token is required"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (p *pdp) metadata(w http.ResponseWriter, _ *http.Request) {
	meta := map[string]string{
		"policy_decision_point":      p.base,
		"access_evaluation_endpoint": p.base + "/access/v1/evaluation",
	}
	if p.batch {
		meta["access_evaluations_endpoint"] = p.base + "/access/v1/evaluations"
	}
	answer(w, http.StatusOK, meta)
}

func (p *pdp) evaluate(w http.ResponseWriter, r *http.Request) {
	var request evaluation
	if err := json.NewDecoder(r.Body).Decode(&request); err != nil {
		answer(w, http.StatusBadRequest, map[string]string{"error": "the body is not an evaluation: " + err.Error()})
		return
	}
	allowed, err := p.engine.decide(&request)
	if err != nil {
		answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	answer(w, http.StatusOK, decision{Decision: allowed})
}

// merged is a batch item with the batch's defaults for what it leaves out (section 7.1).
func merged(defaults, item evaluation) evaluation {
	if item.Subject == nil {
		item.Subject = defaults.Subject
	}
	if item.Action == nil {
		item.Action = defaults.Action
	}
	if item.Resource == nil {
		item.Resource = defaults.Resource
	}
	if len(item.Context) == 0 {
		item.Context = defaults.Context
	}
	return item
}

func (p *pdp) evaluateMany(w http.ResponseWriter, r *http.Request) {
	var request batch
	if err := json.NewDecoder(r.Body).Decode(&request); err != nil {
		answer(w, http.StatusBadRequest, map[string]string{"error": "the body is not an evaluations request: " + err.Error()})
		return
	}
	// Without items the request is one evaluation and is answered as one (section 7.1).
	if len(request.Evaluations) == 0 {
		allowed, err := p.engine.decide(&request.evaluation)
		if err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		answer(w, http.StatusOK, decision{Decision: allowed})
		return
	}
	semantic := request.Options.Semantic
	switch semantic {
	case "", "execute_all", "deny_on_first_deny", "permit_on_first_permit":
	default:
		answer(w, http.StatusBadRequest, map[string]string{"error": "unknown evaluations_semantic " + semantic})
		return
	}
	results := make([]decision, 0, len(request.Evaluations))
	for _, item := range request.Evaluations {
		one := merged(request.evaluation, item)
		allowed, err := p.engine.decide(&one)
		if err != nil {
			// An item that cannot be decided is a deny with the reason (section 7.2).
			results = append(results, decision{Decision: false, Context: map[string]any{"error": err.Error()}})
		} else {
			results = append(results, decision{Decision: allowed})
		}
		last := results[len(results)-1].Decision
		if (semantic == "deny_on_first_deny" && !last) || (semantic == "permit_on_first_permit" && last) {
			break
		}
	}
	answer(w, http.StatusOK, map[string]any{"evaluations": results})
}
