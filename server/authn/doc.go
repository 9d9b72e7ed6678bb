// Package authn authenticates API requests: it turns a request's bearer
// token into a User (name, uid, groups) from a static token list, adds the
// groups every authenticated or anonymous caller carries
// (system:authenticated, system:unauthenticated), and keeps the User in the
// request's context for the layers after it (authorization, the request
// journal, managedFields manager names).
package authn
