// Package devcli is runpod-gpu, the developer's command line for RunPod:
// find the cheapest GPU in stock where you want it (offers),
// start a pod and wait for it (up), list pods (ls), reach one over SSH
// (ssh), delete it (down), and turn GPU names into a reviewed allowlist for
// the CI lane (allowlist), and run the Serverless lane by hand (serverless
// setup|health|prepare|run|cleanup, with a detached cleanup watchdog). It
// shares the lane's planner (pkg/plan), RunPod client and request policy,
// ownership tags and deletion helper. For a repository that adopts the
// lane it creates the GitHub App(s) from a manifest (app), writes the
// callers and configuration (init, pkg/callers), sets the repository up on
// GitHub for both (pkg/ghsetup), checks the set-up before the first pull
// request (doctor, pkg/doctor), plays its workflows on the embedded
// simulated cloud, free and offline (rehearse, pkg/rehearse), and, for a
// copy of the suite kept under another owner, renames the checkout
// (copy-suite, pkg/suitecopy). repro starts a lane run again by hand: a
// developer pod like the run's, from its sealed lane record (pkg/lanerecord),
// with the run's test archive on it.
//
// Install: go install github.com/org/runpod-gpu/pkg/cmd/runpod-gpu@v1
//
// The API key comes from RUNPOD_API_KEY, else from [runpod] api_key in
// ~/.runpod/config.toml, else from its [default] api_key (RunPod's own
// tools' profile); it is never printed and never taken from the command line,
// and a config file other users can read draws a warning. RUNPOD_API_URL
// overrides the API host (tests, proxies): https without user info, or http
// on a loopback host, else refused before the key is sent.
//
// down deletes a pod up started for this developer at once; any other pod
// it shows and asks about (unless --yes), and a CI lane pod it refuses
// without --force. ssh checks the username, host, port and pod name RunPod
// gave before they reach ssh's command line, where "--" ends the options.
//
// Exit codes, which scripts can rely on:
//
//	0  success
//	1  failure: the API, the network, the key or the config file
//	2  usage: a bad or refused flag, an unknown or ambiguous GPU name, a pod name in use,
//	   a deletion refused (a CI pod without --force) or not confirmed
//	3  no capacity: no offer matches, or the chosen offer went out of stock
//	   before the create; nothing was created
//	4  the pod did not boot within the 15-minute budget, or failed while
//	   booting; it was deleted
//	5  a pod may still be billing: a deletion could not be confirmed, or a
//	   create's answer was lost and no pod of its name showed up in the list
//	   within the lookup bound up printed (one may still appear)
//	6  no pod has that name or id (repro: the run has no lane record or test
//	   archive artifact)
//	7  serverless refused, nothing created: an earlier attempt still has a
//	   template or endpoint (run cleanup with its receipt first)
//	8  serverless refused, nothing created: the ledger's caps leave no room
//	9  serverless refused, nothing created: the ledger was edited outside the lane
//	10 repro refused the run's lane record, nothing created: no lane job's log
//	   seals it (forged), or it records another run
//	130 interrupted (a pod being started is deleted first)
//
// runpod-gpu ssh exits with ssh's own status once ssh runs.
package devcli
