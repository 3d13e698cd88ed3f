package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// engine is the loaded policy set and entities, and the namespace of the entity types.
type engine struct {
	policies  *cedar.PolicySet
	entities  cedar.EntityMap
	namespace string
}

func load(files []string, entitiesFile, namespace string) (*engine, error) {
	if len(files) == 0 {
		return nil, errors.New("give at least one -policies file")
	}
	// Several files are joined with "\n" in the order given and parsed as one set, as the
	// harnessweaver.cedar built-in does, so the ids are policy0, policy1, ... across files.
	texts := make([]string, 0, len(files))
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		texts = append(texts, string(text))
	}
	set, err := cedar.NewPolicySetFromBytes(files[0], []byte(strings.Join(texts, "\n")))
	if err != nil {
		return nil, fmt.Errorf("the policies do not parse: %w", err)
	}
	entities := cedar.EntityMap{}
	if entitiesFile != "" {
		text, err := os.ReadFile(entitiesFile)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(text, &entities); err != nil {
			return nil, fmt.Errorf("the entities do not parse: %w", err)
		}
	}
	return &engine{policies: set, entities: entities, namespace: namespace}, nil
}

// entityType is the Cedar type of an AuthZEN type: "user" -> User (NS::User with a namespace).
func (e *engine) entityType(authzen string) (types.EntityType, error) {
	if authzen == "" {
		return "", errors.New("an empty type")
	}
	name := strings.ToUpper(authzen[:1]) + authzen[1:]
	if e.namespace != "" {
		name = e.namespace + "::" + name
	}
	return types.NewEntityType(name)
}

// decide answers one complete AuthZEN request.
func (e *engine) decide(r *evaluation) (bool, error) {
	if r.Subject == nil || r.Action == nil || r.Resource == nil {
		return false, errors.New("subject, action and resource are required")
	}
	principalType, err := e.entityType(r.Subject.Type)
	if err != nil {
		return false, fmt.Errorf("subject.type: %w", err)
	}
	resourceType, err := e.entityType(r.Resource.Type)
	if err != nil {
		return false, fmt.Errorf("resource.type: %w", err)
	}
	actionType, err := e.entityType("Action")
	if err != nil {
		return false, err
	}
	if r.Action.Name == "" {
		return false, errors.New("action.name is required")
	}
	context := cedar.NewRecord(cedar.RecordMap{})
	if len(r.Context) > 0 && string(r.Context) != "null" {
		var value types.Value
		if err := types.UnmarshalJSON(r.Context, &value); err != nil {
			return false, fmt.Errorf("context: %w", err)
		}
		record, ok := value.(types.Record)
		if !ok {
			return false, errors.New("context is not an object")
		}
		context = record
	}
	request := cedar.Request{
		Principal: cedar.NewEntityUID(principalType, cedar.String(r.Subject.ID)),
		Action:    cedar.NewEntityUID(actionType, cedar.String(r.Action.Name)),
		Resource:  cedar.NewEntityUID(resourceType, cedar.String(r.Resource.ID)),
		Context:   context,
	}
	decision, _ := cedar.Authorize(e.policies, e.entities, request)
	return decision == cedar.Allow, nil
}
