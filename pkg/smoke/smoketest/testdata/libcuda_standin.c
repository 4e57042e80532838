/*
 * libcuda_standin.c - a stand-in for the NVIDIA CUDA driver library, libcuda.so.1.
 *
 * Built with:  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 libcuda_standin.c
 * (smoketest.BuildStandInDriver does this). It exports the driver API entry points that the
 * cuda-smoke proof calls, with the same C signatures, and behaves like a driver of a configured
 * CUDA version on a host with one configured device. Tests of the proof and the simulated hosts
 * of the simulated cloud load it in place of the real driver.
 *
 * Configuration: environment variables, read again at every cuInit so that one process can run
 * several scenarios one after another.
 *
 *   SIM_CUDA_DRIVER_VERSION  cuDriverGetVersion's answer, 1000*major + 10*minor   (default 12080)
 *   SIM_CUDA_MAX_PTX_ISA     newest PTX ISA ".version X.Y" the JIT accepts; newer PTX fails with
 *                            CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)
 *                            (default: the ISA of the driver's CUDA release, e.g. 12.8 -> 8.7)
 *   SIM_CUDA_CC              device compute capability MAJOR.MINOR               (default 8.9)
 *   SIM_CUDA_VRAM_MB         device memory in MiB                                 (default 24564)
 *   SIM_CUDA_DEVICE_NAME     cuDeviceGetName's answer      (default "NVIDIA GeForce RTX 4090")
 *   SIM_CUDA_DEVICE_COUNT    number of devices, 0 makes cuInit fail with CUDA_ERROR_NO_DEVICE
 *                                                                                  (default 1)
 *   SIM_CUDA_READBACK        correct | wrong (the kernel writes its result + 1) |
 *                            zero (the kernel writes nothing)                 (default correct)
 *   SIM_CUDA_FAIL            NAME:CODE, e.g. cuCtxSynchronize:700 - the entry point NAME
 *                            returns CODE instead of doing its work                (default none)
 *   SIM_CUDA_CALL_LOG        file to which every entry point appends its name, one per line,
 *                            so a test can assert what was (not) called           (default none)
 *
 * A malformed value makes cuInit print the variable and what it expects to stderr and return
 * CUDA_ERROR_INVALID_VALUE (1).
 *
 * What it emulates:
 *   - cuModuleLoadData parses the PTX text's ".version X.Y", ".target sm_XY[a|f]" and ".entry"
 *     directives. Too new an ISA -> 222; a target the ISA does not know -> CUDA_ERROR_INVALID_PTX
 *     (218); a target above the device (or an arch-specific sm_XYa of another device) ->
 *     CUDA_ERROR_NO_BINARY_FOR_GPU (209).
 *   - It runs one kind of kernel: *out = in + K, with parameters (u64 out, u32 in). K is read from
 *     the module's "add.u32" / "add.s32" instruction (decimal or 0x hex immediate), so the value
 *     read back is the one the real kernel would write. A module without one fails with 218.
 *   - The current context is per thread, as in the real driver, so a caller that hops threads
 *     between cuCtxSetCurrent and later calls gets CUDA_ERROR_INVALID_CONTEXT (201).
 *   - Device memory is host memory; pointers are checked against live allocations, and a launch
 *     that would write outside one makes cuCtxSynchronize return CUDA_ERROR_ILLEGAL_ADDRESS (700),
 *     which sticks to the context as on real hardware.
 *   - The last cuDevicePrimaryCtxRelease_v2 frees the context's modules and memory.
 *
 * Not thread-safe beyond the per-thread current context: the proof drives it from one thread.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef unsigned long long CUdeviceptr;
typedef struct standin_ctx *CUcontext;
typedef struct standin_module *CUmodule;
typedef struct standin_module *CUfunction; /* one kernel per module: the function is its module */
typedef void *CUstream;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_FAILED = 719,
};

enum {
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

#define MAX_DEVICES 16

enum readback { READBACK_CORRECT, READBACK_WRONG, READBACK_ZERO };

static struct {
	int driver_version;
	int max_isa; /* ISA X.Y as 10*X + Y */
	int cc;      /* compute capability X.Y as 10*X + Y */
	unsigned long long vram_bytes;
	int device_count;
	char name[256];
	enum readback readback;
	char fail_call[128];
	int fail_code;
} cfg;

static int initialized;

struct allocation {
	struct allocation *next;
	unsigned char *bytes;
	size_t size;
};

struct standin_module {
	struct standin_module *next;
	char entry[256];
	uint32_t addend;
	struct standin_ctx *ctx;
};

struct standin_ctx {
	CUdevice device;
	int refcount;
	CUresult sticky; /* an asynchronous error: reported by every later synchronizing call */
	struct allocation *allocations;
	struct standin_module *modules;
	unsigned long long used_bytes;
};

static struct standin_ctx primary[MAX_DEVICES];
static __thread struct standin_ctx *current;

/* ---- CUDA release -> PTX ISA, from NVIDIA's PTX ISA release notes (same table as ptx.go) ---- */

static const struct {
	int cuda; /* 1000*major + 10*minor */
	int isa;  /* 10*X + Y */
} isa_by_cuda[] = {
	{11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75},
	{11060, 76}, {11070, 77}, {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82},
	{12030, 83}, {12040, 84}, {12050, 85}, {12060, 85}, {12070, 86}, {12080, 87},
	{12090, 88}, {13000, 90}, {13010, 91},
};

/* The newest ISA of any release not newer than the driver: what its JIT accepts. */
static int isa_for_driver(int driver_version)
{
	int isa = 0;
	for (size_t i = 0; i < sizeof isa_by_cuda / sizeof isa_by_cuda[0]; i++)
		if (driver_version >= isa_by_cuda[i].cuda)
			isa = isa_by_cuda[i].isa;
	return isa;
}

/* Portable targets and the first ISA that knows each (PTX ISA "Target ISA Notes"). */
static const struct {
	int sm;
	int min_isa;
} targets[] = {
	{50, 40}, {52, 40}, {53, 42}, {60, 50}, {61, 50}, {62, 50}, {70, 60}, {72, 61},
	{75, 63}, {80, 70}, {86, 71}, {87, 74}, {88, 90}, {89, 78}, {90, 78}, {100, 86},
	{101, 86}, {103, 88}, {110, 90}, {120, 87}, {121, 88},
};

/* ---- call log and fault injection ---- */

static void log_call(const char *name)
{
	const char *path = getenv("SIM_CUDA_CALL_LOG");
	if (path == NULL || *path == '\0')
		return;
	FILE *f = fopen(path, "a");
	if (f == NULL)
		return;
	fprintf(f, "%s\n", name);
	fclose(f);
}

/* Every entry point starts with ENTER: it logs the call and applies SIM_CUDA_FAIL. */
#define ENTER(name)                                                                     \
	do {                                                                            \
		log_call(name);                                                         \
		if (cfg.fail_call[0] != '\0' && strcmp(cfg.fail_call, name) == 0)     \
			return cfg.fail_code;                                           \
	} while (0)

#define REQUIRE_INIT()                                   \
	do {                                             \
		if (!initialized)                        \
			return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)

/* ---- configuration ---- */

static int config_error(const char *var, const char *value, const char *want)
{
	fprintf(stderr, "libcuda stand-in: %s=\"%s\": %s\n", var, value, want);
	return CUDA_ERROR_INVALID_VALUE;
}

/* Parses a whole decimal integer in [min, max]. */
static int parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Parses "X.Y" into 10*X + Y, with X in 1..99 and Y in 0..9. */
static int parse_dotted(const char *s, int *out)
{
	int major, minor, n = 0;
	if (sscanf(s, "%2d.%1d%n", &major, &minor, &n) != 2 || s[n] != '\0' || major < 1 || minor < 0)
		return -1;
	*out = major * 10 + minor;
	return 0;
}

static CUresult load_config(void)
{
	const char *v;
	long long n;

	memset(&cfg, 0, sizeof cfg);
	cfg.driver_version = 12080;
	cfg.cc = 89;
	cfg.vram_bytes = 24564ULL << 20;
	cfg.device_count = 1;
	snprintf(cfg.name, sizeof cfg.name, "%s", "NVIDIA GeForce RTX 4090");
	cfg.readback = READBACK_CORRECT;

	if ((v = getenv("SIM_CUDA_DRIVER_VERSION")) && *v) {
		if (parse_int(v, 1000, 999990, &n) != 0 || n % 10 != 0)
			return config_error("SIM_CUDA_DRIVER_VERSION", v, "want 1000*major + 10*minor, e.g. 12080");
		cfg.driver_version = (int)n;
	}
	cfg.max_isa = isa_for_driver(cfg.driver_version);
	if ((v = getenv("SIM_CUDA_MAX_PTX_ISA")) && *v && parse_dotted(v, &cfg.max_isa) != 0)
		return config_error("SIM_CUDA_MAX_PTX_ISA", v, "want X.Y, e.g. 8.7");
	if ((v = getenv("SIM_CUDA_CC")) && *v && parse_dotted(v, &cfg.cc) != 0)
		return config_error("SIM_CUDA_CC", v, "want MAJOR.MINOR, e.g. 8.9");
	if ((v = getenv("SIM_CUDA_VRAM_MB")) && *v) {
		if (parse_int(v, 0, 1LL << 30, &n) != 0)
			return config_error("SIM_CUDA_VRAM_MB", v, "want a number of MiB, e.g. 24564");
		cfg.vram_bytes = (unsigned long long)n << 20;
	}
	if ((v = getenv("SIM_CUDA_DEVICE_NAME")) && *v)
		snprintf(cfg.name, sizeof cfg.name, "%s", v);
	if ((v = getenv("SIM_CUDA_DEVICE_COUNT")) && *v) {
		if (parse_int(v, 0, MAX_DEVICES, &n) != 0)
			return config_error("SIM_CUDA_DEVICE_COUNT", v, "want 0 to 16");
		cfg.device_count = (int)n;
	}
	if ((v = getenv("SIM_CUDA_READBACK")) && *v) {
		if (strcmp(v, "correct") == 0)
			cfg.readback = READBACK_CORRECT;
		else if (strcmp(v, "wrong") == 0)
			cfg.readback = READBACK_WRONG;
		else if (strcmp(v, "zero") == 0)
			cfg.readback = READBACK_ZERO;
		else
			return config_error("SIM_CUDA_READBACK", v, "want correct, wrong or zero");
	}
	if ((v = getenv("SIM_CUDA_FAIL")) && *v) {
		const char *colon = strchr(v, ':');
		if (colon == NULL || colon == v || (size_t)(colon - v) >= sizeof cfg.fail_call ||
		    parse_int(colon + 1, 1, 999, &n) != 0)
			return config_error("SIM_CUDA_FAIL", v, "want NAME:CODE, e.g. cuCtxSynchronize:700");
		memcpy(cfg.fail_call, v, (size_t)(colon - v));
		cfg.fail_code = (int)n;
	}
	return CUDA_SUCCESS;
}

/* ---- initialization, version, devices ---- */

CUresult cuInit(unsigned int flags)
{
	initialized = 0;
	CUresult res = load_config();
	log_call("cuInit");
	if (res != CUDA_SUCCESS)
		return res;
	if (cfg.fail_call[0] != '\0' && strcmp(cfg.fail_call, "cuInit") == 0)
		return cfg.fail_code;
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (cfg.device_count == 0)
		return CUDA_ERROR_NO_DEVICE;
	initialized = 1;
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
	ENTER("cuDriverGetVersion");
	if (version == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	/* Answers before cuInit too, as the real driver does. */
	if (!initialized && load_config() != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_VALUE;
	*version = cfg.driver_version;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	ENTER("cuDeviceGetCount");
	REQUIRE_INIT();
	if (count == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*count = cfg.device_count;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	ENTER("cuDeviceGet");
	REQUIRE_INIT();
	if (device == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= cfg.device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

static int valid_device(CUdevice dev) { return dev >= 0 && dev < cfg.device_count; }

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	ENTER("cuDeviceGetName");
	REQUIRE_INIT();
	if (name == NULL || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "%s", cfg.name);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev)
{
	ENTER("cuDeviceGetAttribute");
	REQUIRE_INIT();
	if (value == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*value = cfg.cc / 10;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*value = cfg.cc % 10;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*value = 1;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	ENTER("cuDeviceTotalMem_v2");
	REQUIRE_INIT();
	if (bytes == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = (size_t)cfg.vram_bytes;
	return CUDA_SUCCESS;
}

/* ---- contexts ---- */

static void destroy_context(struct standin_ctx *ctx)
{
	for (struct allocation *a = ctx->allocations, *next; a != NULL; a = next) {
		next = a->next;
		free(a->bytes);
		free(a);
	}
	for (struct standin_module *m = ctx->modules, *next; m != NULL; m = next) {
		next = m->next;
		free(m);
	}
	CUdevice dev = ctx->device;
	memset(ctx, 0, sizeof *ctx);
	ctx->device = dev;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	ENTER("cuDevicePrimaryCtxRetain");
	REQUIRE_INIT();
	if (pctx == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	primary[dev].device = dev;
	primary[dev].refcount++;
	*pctx = &primary[dev];
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	ENTER("cuDevicePrimaryCtxRelease_v2");
	REQUIRE_INIT();
	if (!valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	struct standin_ctx *ctx = &primary[dev];
	if (ctx->refcount == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--ctx->refcount == 0) {
		destroy_context(ctx);
		if (current == ctx)
			current = NULL;
	}
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	ENTER("cuCtxSetCurrent");
	REQUIRE_INIT();
	if (ctx != NULL && (ctx < &primary[0] || ctx >= &primary[MAX_DEVICES] || ctx->refcount == 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = ctx;
	return CUDA_SUCCESS;
}

/* The calling thread's live context, or NULL. */
static struct standin_ctx *live_context(void)
{
	return (current != NULL && current->refcount > 0) ? current : NULL;
}

#define REQUIRE_CONTEXT(ctx)                               \
	struct standin_ctx *ctx = live_context();          \
	do {                                               \
		if (ctx == NULL)                           \
			return CUDA_ERROR_INVALID_CONTEXT; \
	} while (0)

CUresult cuCtxSynchronize(void)
{
	ENTER("cuCtxSynchronize");
	REQUIRE_INIT();
	REQUIRE_CONTEXT(ctx);
	return ctx->sticky;
}

/* ---- PTX modules ---- */

/* Skips spaces and tabs. */
static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Finds the directive at the start of a line (after blanks), ignoring // comment lines. */
static const char *find_directive(const char *text, const char *directive)
{
	size_t n = strlen(directive);
	for (const char *line = text; line != NULL && *line != '\0';) {
		const char *p = skip_blank(line);
		if (strncmp(p, directive, n) == 0 && (p[n] == ' ' || p[n] == '\t'))
			return skip_blank(p + n);
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return NULL;
}

/* Reads "X.Y" as 10*X + Y. */
static int read_isa(const char *p, int *isa)
{
	int major, minor, n = 0;
	if (sscanf(p, "%2d.%1d%n", &major, &minor, &n) != 2 || isdigit((unsigned char)p[n]))
		return -1;
	*isa = major * 10 + minor;
	return 0;
}

/* Finds the immediate of the first add.u32 / add.s32 instruction: the kernel's K. */
static int read_addend(const char *text, uint32_t *addend)
{
	const char *p = text;
	while ((p = strstr(p, "add.")) != NULL) {
		p += 4;
		if (strncmp(p, "u32", 3) != 0 && strncmp(p, "s32", 3) != 0)
			continue;
		const char *semi = strchr(p, ';');
		if (semi == NULL)
			return -1;
		const char *comma = NULL;
		for (const char *q = p; q < semi; q++)
			if (*q == ',')
				comma = q;
		if (comma == NULL)
			return -1;
		char *end;
		errno = 0;
		long long v = strtoll(skip_blank(comma + 1), &end, 0);
		if (errno != 0 || skip_blank(end) != semi)
			return -1;
		*addend = (uint32_t)v;
		return 0;
	}
	return -1;
}

static void module_fail(const char *why)
{
	fprintf(stderr, "libcuda stand-in: cuModuleLoadData: %s\n", why);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	ENTER("cuModuleLoadData");
	REQUIRE_INIT();
	REQUIRE_CONTEXT(ctx);
	if (module == NULL || image == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	const char *text = image;
	if (strncmp(text, "\177ELF", 4) == 0) {
		module_fail("cubin images are not emulated, only PTX text");
		return CUDA_ERROR_INVALID_IMAGE;
	}

	int isa;
	const char *p = find_directive(text, ".version");
	if (p == NULL || read_isa(p, &isa) != 0) {
		module_fail("no .version X.Y directive");
		return CUDA_ERROR_INVALID_PTX;
	}
	if (isa > cfg.max_isa) {
		fprintf(stderr, "libcuda stand-in: cuModuleLoadData: PTX ISA %d.%d is newer than this driver's %d.%d\n",
			isa / 10, isa % 10, cfg.max_isa / 10, cfg.max_isa % 10);
		return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
	}

	p = find_directive(text, ".target");
	int sm = 0, n = 0;
	if (p == NULL || sscanf(p, "sm_%3d%n", &sm, &n) != 1) {
		module_fail("no .target sm_XY directive");
		return CUDA_ERROR_INVALID_PTX;
	}
	int arch_specific = p[n] == 'a' || p[n] == 'f';
	int known = 0;
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
		if (targets[i].sm == sm && isa >= targets[i].min_isa)
			known = 1;
	if (!known) {
		fprintf(stderr, "libcuda stand-in: cuModuleLoadData: .target sm_%d is not known to PTX ISA %d.%d\n",
			sm, isa / 10, isa % 10);
		return CUDA_ERROR_INVALID_PTX;
	}
	if (sm > cfg.cc || (arch_specific && sm != cfg.cc))
		return CUDA_ERROR_NO_BINARY_FOR_GPU;

	struct standin_module *m = calloc(1, sizeof *m);
	if (m == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = strstr(text, ".entry");
	if (p == NULL || sscanf(p + 6, " %255[A-Za-z0-9_$]", m->entry) != 1) {
		free(m);
		module_fail("no .entry directive");
		return CUDA_ERROR_INVALID_PTX;
	}
	if (read_addend(text, &m->addend) != 0) {
		free(m);
		module_fail("the stand-in runs only kernels computing *out = in + K (no add.u32/add.s32 immediate)");
		return CUDA_ERROR_INVALID_PTX;
	}
	m->ctx = ctx;
	m->next = ctx->modules;
	ctx->modules = m;
	*module = m;
	return CUDA_SUCCESS;
}

static struct standin_module *find_module(struct standin_ctx *ctx, CUmodule module)
{
	for (struct standin_module *m = ctx->modules; m != NULL; m = m->next)
		if (m == module)
			return m;
	return NULL;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name)
{
	ENTER("cuModuleGetFunction");
	REQUIRE_INIT();
	REQUIRE_CONTEXT(ctx);
	if (fn == NULL || name == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct standin_module *m = find_module(ctx, module);
	if (m == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	if (strcmp(m->entry, name) != 0)
		return CUDA_ERROR_NOT_FOUND;
	*fn = m;
	return CUDA_SUCCESS;
}

/* ---- memory ---- */

/* The allocation holding [ptr, ptr+size), or NULL. */
static struct allocation *find_allocation(struct standin_ctx *ctx, CUdeviceptr ptr, size_t size)
{
	for (struct allocation *a = ctx->allocations; a != NULL; a = a->next) {
		uintptr_t base = (uintptr_t)a->bytes;
		if (ptr >= base && size <= a->size && ptr - base <= a->size - size)
			return a;
	}
	return NULL;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	ENTER("cuMemAlloc_v2");
	REQUIRE_INIT();
	REQUIRE_CONTEXT(ctx);
	if (dptr == NULL || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (bytes > cfg.vram_bytes - ctx->used_bytes || ctx->used_bytes > cfg.vram_bytes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct allocation *a = calloc(1, sizeof *a);
	if (a == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->bytes = calloc(1, bytes);
	if (a->bytes == NULL) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->size = bytes;
	a->next = ctx->allocations;
	ctx->allocations = a;
	ctx->used_bytes += bytes;
	*dptr = (CUdeviceptr)(uintptr_t)a->bytes;
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
	ENTER("cuMemcpyDtoH_v2");
	REQUIRE_INIT();
	REQUIRE_CONTEXT(ctx);
	if (ctx->sticky != CUDA_SUCCESS)
		return ctx->sticky;
	if (dst == NULL || find_allocation(ctx, src, bytes) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	return CUDA_SUCCESS;
}

/* ---- launch ---- */

CUresult cuLaunchKernel(CUfunction f, unsigned int gridX, unsigned int gridY, unsigned int gridZ,
			unsigned int blockX, unsigned int blockY, unsigned int blockZ,
			unsigned int sharedMemBytes, CUstream stream, void **kernelParams, void **extra)
{
	ENTER("cuLaunchKernel");
	REQUIRE_INIT();
	REQUIRE_CONTEXT(ctx);
	if (find_module(ctx, f) == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	if (gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 || blockY == 0 || blockZ == 0 ||
	    stream != NULL || extra != NULL || kernelParams == NULL || kernelParams[0] == NULL ||
	    kernelParams[1] == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	(void)sharedMemBytes;

	CUdeviceptr out = *(CUdeviceptr *)kernelParams[0];
	uint32_t in = *(uint32_t *)kernelParams[1];
	if (find_allocation(ctx, out, sizeof(uint32_t)) == NULL) {
		/* Real launches fail asynchronously: the error surfaces at the next synchronization. */
		ctx->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
		return CUDA_SUCCESS;
	}
	uint32_t value = in + f->addend;
	switch (cfg.readback) {
	case READBACK_CORRECT:
		break;
	case READBACK_WRONG:
		value += 1;
		break;
	case READBACK_ZERO:
		return CUDA_SUCCESS;
	}
	memcpy((void *)(uintptr_t)out, &value, sizeof value);
	return CUDA_SUCCESS;
}

/* ---- error names ---- */

static const struct {
	CUresult code;
	const char *name;
	const char *text;
} errors[] = {
	{CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
	{CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	{CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
	{CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	{CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

CUresult cuGetErrorName(CUresult error, const char **name)
{
	if (name == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == error) {
			*name = errors[i].name;
			return CUDA_SUCCESS;
		}
	*name = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **text)
{
	if (text == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == error) {
			*text = errors[i].text;
			return CUDA_SUCCESS;
		}
	*text = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
