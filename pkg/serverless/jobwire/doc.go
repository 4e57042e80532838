// Package jobwire is what crosses the wire in a Serverless job: the job's
// input and output, the archives both ways (payload and results) with the
// checks they pass before one byte is written, and their SHA-256 form.
//
// The lane (package serverless) and the pod-side worker (package
// serverless/worker) both build on it, so that one definition decides the
// format. It stays free of the RunPod client, the request policy and the
// retry library: the worker binary ships in the image and stays small.
package jobwire
