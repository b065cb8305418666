// Package apiclient is a client of the account API generated from
// api/openapi.yaml alone by oapi-codegen, as a stranger with the document
// would make one: its tests place a locate through the owner's bearer door
// with it (service.TestGeneratedClient), which proves the document is
// enough to reach the service. Nothing of locator imports it;
// .ci/openapi-lint checks that it was generated from the document as it
// stands.
package apiclient

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -generate types,client -package apiclient -o apiclient.go ../../api/openapi.yaml
