// Package runpodsim is an in-process simulation of the RunPod REST v2 API the
// suite uses: the GPU and data-center catalog and the pod lifecycle, with
// per-second billing and a seeded fault plan.
//
// A [Server] is an [net/http.Handler]; serve it with net/http/httptest or
// [Server.ListenLoopback] and point a RunPod client at it. Routes:
//
//	GET    /v2/catalog/gpus[?include=AVAILABILITY&product=POD&count&cloud&countryCodes&cudaVersions|minCudaVersion]
//	GET    /v2/catalog/gpus/{id}            (ids contain spaces: URL-escape them)
//	GET    /v2/catalog/datacenters[?include=GPU_AVAILABILITY&regions&networkVolumeTypes&compliance&globalNetwork]
//	GET    /v2/catalog/datacenters/{id}
//	GET    /v2/pods[?limit&cursor]          (contract delta: nextCursor in the answer)
//	POST   /v2/pods
//	GET    /v2/pods/{id}
//	DELETE /v2/pods/{id}
//	POST   /v2/pods/{id}/action             ({"action":"start|stop|restart|terminate"})
//	GET    /v2/account/ssh-keys             (PUT replaces the set; see WithSSHKeys, SSHKeys)
//	GET    /v2/billing/pods[?startTime&endTime&bucketSize|lastN&podId]
//	GET    /v2/billing/serverless[?startTime&endTime&bucketSize|lastN&serverlessId]
//	GET    /v2/network-volumes               (POST creates; see WithNetworkVolumes)
//	GET    /v2/network-volumes/{id}          (PATCH grows or renames, DELETE deletes; 403 for another account's)
//	GET    /v2/billing/network-volumes[?startTime&endTime&bucketSize|lastN&networkVolumeId]
//
// Bodies follow pkg/sim/contract: requests the contract rejects get 422
// problem+json with the contract's messages in "errors"; every answer is a
// body the contract allows. Errors are application/problem+json: 400 for rule
// violations and no capacity, 401 without a bearer token, 402 when the
// balance is too low, 404, 405, 409 for an action the pod's status does not
// allow, 422, 429 with Retry-After, and 5xx from the fault plan.
//
// Pods move PROVISIONING → STARTING → RUNNING, then EXITED (stopped, or the
// container exited with any code), ERROR (the host failed during boot or the
// container could not start) or TERMINATED (deleted). runtime is null unless
// the pod is RUNNING (and after a simulated runtime loss); cost is the pod's
// hourly rate, and 0 once it is EXITED, ERROR or TERMINATED. Placement
// chooses a host of the market that has free GPUs of the type in the cloud
// and data centers asked for and whose driver meets gpu.minCudaVersion (or
// gpu.allowedCudaVersions exactly).
//
// Every transition is driven by the injected clock ([simclock.Virtual] by
// default): state is computed from the clock on each request, and a clock
// timer starts containers on time. With the default [ModelRunner] nothing
// runs as a process, so benchmarks can simulate thousands of pods in
// seconds; a [HostRunner] plugs real containers (processes) in instead.
//
// The billing routes answer from the same per-second meter as [Server.Bill]
// and [Server.ServerlessBill], split into buckets; [WithBillingRounding]
// makes them round each billed stretch up to a coarser unit, as an invoice may,
// and [WithBillingDelay] shows charges only once they are that old, as
// RunPod's billing rows appear with a delay.
//
// Tests inspect what happened through [Server.Pods], [Server.Bill],
// [Server.Spent] and [Server.Requests]. The same seed and the same sequence
// of calls give the same pods, placements, ids and faults.
package runpodsim
