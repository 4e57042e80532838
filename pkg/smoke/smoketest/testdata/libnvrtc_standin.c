/*
 * libnvrtc_standin.c - a stand-in for NVIDIA's runtime compiler library, libnvrtc.so.MAJOR.
 *
 * Built with:
 *   gcc -shared -fPIC -DSTANDIN_NVRTC_MAJOR=12 -DSTANDIN_NVRTC_MINOR=8 \
 *       -Wl,-soname,libnvrtc.so.12 -o libnvrtc.so.12 libnvrtc_standin.c -ldl
 * (smoketest.BuildStandInNVRTC does this). The version is fixed at build time, like a real
 * NVRTC package's. It exports the NVRTC entry points the cuda-smoke proof calls, with the same
 * C signatures.
 *
 * What it emulates:
 *   - nvrtcCompileProgram first loads libnvrtc-builtins.so.MAJOR.MINOR by soname, as the real
 *     library does, and fails with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE (7) when it cannot.
 *   - It accepts the options --gpu-architecture=compute_XY and -arch=compute_XY (default
 *     compute_52, the real default); an architecture its PTX ISA does not know is
 *     NVRTC_ERROR_INVALID_OPTION (5), as is any other option.
 *   - It "compiles" one kind of kernel, *out = in + K: it takes the __global__ function's name
 *     (which must be extern "C", or the real compiler would mangle it) and the first "+ K"
 *     constant after it, and writes the PTX NVCC would, with ".version" the ISA of its release
 *     and ".target sm_XY" for compute_XY. Other sources fail with NVRTC_ERROR_COMPILATION (6)
 *     and a log saying so.
 *
 * Every entry point appends its name to the file named by SIM_CUDA_CALL_LOG, if set, the same
 * log the driver stand-in writes, so a test sees one timeline.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STANDIN_NVRTC_MAJOR
#define STANDIN_NVRTC_MAJOR 12
#endif
#ifndef STANDIN_NVRTC_MINOR
#define STANDIN_NVRTC_MINOR 8
#endif

typedef enum {
	NVRTC_SUCCESS = 0,
	NVRTC_ERROR_OUT_OF_MEMORY = 1,
	NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
	NVRTC_ERROR_INVALID_INPUT = 3,
	NVRTC_ERROR_INVALID_PROGRAM = 4,
	NVRTC_ERROR_INVALID_OPTION = 5,
	NVRTC_ERROR_COMPILATION = 6,
	NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
} nvrtcResult;

struct program {
	char *source;
	char *ptx;
	char log[1024];
};
typedef struct program *nvrtcProgram;

/* CUDA release -> PTX ISA (10*X + Y), from NVIDIA's PTX ISA release notes. */
static int own_isa(void)
{
	static const struct {
		int cuda, isa;
	} table[] = {
		{110, 70}, {111, 71}, {112, 72}, {113, 73}, {114, 74}, {115, 75}, {116, 76},
		{117, 77}, {118, 78}, {120, 80}, {121, 81}, {122, 82}, {123, 83}, {124, 84},
		{125, 85}, {126, 85}, {127, 86}, {128, 87}, {129, 88}, {130, 90}, {131, 91},
	};
	int release = STANDIN_NVRTC_MAJOR * 10 + STANDIN_NVRTC_MINOR, isa = 0;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (release >= table[i].cuda)
			isa = table[i].isa;
	return isa;
}

/* Virtual architectures and the first ISA that knows each. */
static int arch_known(int sm, int isa)
{
	static const struct {
		int sm, min_isa;
	} archs[] = {
		{50, 40}, {52, 40}, {53, 42}, {60, 50}, {61, 50}, {62, 50}, {70, 60}, {72, 61},
		{75, 63}, {80, 70}, {86, 71}, {87, 74}, {88, 90}, {89, 78}, {90, 78}, {100, 86},
		{101, 86}, {103, 88}, {110, 90}, {120, 87}, {121, 88},
	};
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
		if (archs[i].sm == sm && isa >= archs[i].min_isa)
			return 1;
	return 0;
}

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

const char *nvrtcGetErrorString(nvrtcResult result)
{
	switch (result) {
	case NVRTC_SUCCESS:
		return "NVRTC_SUCCESS";
	case NVRTC_ERROR_OUT_OF_MEMORY:
		return "NVRTC_ERROR_OUT_OF_MEMORY";
	case NVRTC_ERROR_PROGRAM_CREATION_FAILURE:
		return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
	case NVRTC_ERROR_INVALID_INPUT:
		return "NVRTC_ERROR_INVALID_INPUT";
	case NVRTC_ERROR_INVALID_PROGRAM:
		return "NVRTC_ERROR_INVALID_PROGRAM";
	case NVRTC_ERROR_INVALID_OPTION:
		return "NVRTC_ERROR_INVALID_OPTION";
	case NVRTC_ERROR_COMPILATION:
		return "NVRTC_ERROR_COMPILATION";
	case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE:
		return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
	}
	return "NVRTC_ERROR unknown";
}

nvrtcResult nvrtcVersion(int *major, int *minor)
{
	log_call("nvrtcVersion");
	if (major == NULL || minor == NULL)
		return NVRTC_ERROR_INVALID_INPUT;
	*major = STANDIN_NVRTC_MAJOR;
	*minor = STANDIN_NVRTC_MINOR;
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int numHeaders,
			       const char *const *headers, const char *const *includeNames)
{
	log_call("nvrtcCreateProgram");
	(void)name;
	(void)headers;
	(void)includeNames;
	if (prog == NULL || src == NULL || numHeaders < 0)
		return NVRTC_ERROR_INVALID_INPUT;
	struct program *p = calloc(1, sizeof *p);
	if (p == NULL || (p->source = strdup(src)) == NULL) {
		free(p);
		return NVRTC_ERROR_OUT_OF_MEMORY;
	}
	*prog = p;
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
	log_call("nvrtcDestroyProgram");
	if (prog == NULL || *prog == NULL)
		return NVRTC_ERROR_INVALID_PROGRAM;
	free((*prog)->source);
	free((*prog)->ptx);
	free(*prog);
	*prog = NULL;
	return NVRTC_SUCCESS;
}

/* Parses one option; sets *sm for an architecture option. */
static int parse_option(const char *opt, int *sm)
{
	const char *value = NULL;
	if (strncmp(opt, "--gpu-architecture=", 19) == 0)
		value = opt + 19;
	else if (strncmp(opt, "-arch=", 6) == 0)
		value = opt + 6;
	int n = 0;
	if (value == NULL || sscanf(value, "compute_%3d%n", sm, &n) != 1 || value[n] != '\0')
		return -1;
	return 0;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
	log_call("nvrtcCompileProgram");
	if (prog == NULL)
		return NVRTC_ERROR_INVALID_PROGRAM;
	if (numOptions < 0 || (numOptions > 0 && options == NULL))
		return NVRTC_ERROR_INVALID_INPUT;
	prog->log[0] = '\0';

	char builtins[64];
	snprintf(builtins, sizeof builtins, "libnvrtc-builtins.so.%d.%d", STANDIN_NVRTC_MAJOR, STANDIN_NVRTC_MINOR);
	if (dlopen(builtins, RTLD_NOW) == NULL) {
		snprintf(prog->log, sizeof prog->log, "nvrtc: error: failed to open %s", builtins);
		return NVRTC_ERROR_BUILTIN_OPERATION_FAILURE;
	}

	int isa = own_isa(), sm = 52;
	for (int i = 0; i < numOptions; i++) {
		if (parse_option(options[i], &sm) != 0) {
			snprintf(prog->log, sizeof prog->log, "nvrtc: error: unrecognized option %s", options[i]);
			return NVRTC_ERROR_INVALID_OPTION;
		}
	}
	if (!arch_known(sm, isa)) {
		snprintf(prog->log, sizeof prog->log, "nvrtc: error: invalid value for --gpu-architecture (-arch): compute_%d", sm);
		return NVRTC_ERROR_INVALID_OPTION;
	}

	char name[256];
	const char *global = strstr(prog->source, "__global__");
	const char *v = global ? strstr(global, "void") : NULL;
	const char *plus = v ? strchr(v, '+') : NULL;
	if (strstr(prog->source, "extern \"C\"") == NULL || v == NULL || plus == NULL ||
	    sscanf(v + 4, " %255[A-Za-z0-9_]", name) != 1) {
		snprintf(prog->log, sizeof prog->log,
			 "stand-in NVRTC: compiles only extern \"C\" __global__ kernels computing *out = in + K");
		return NVRTC_ERROR_COMPILATION;
	}
	char *end;
	errno = 0;
	unsigned long long k = strtoull(plus + 1, &end, 0);
	if (errno != 0 || end == plus + 1 || k > 0xffffffffULL) {
		snprintf(prog->log, sizeof prog->log, "stand-in NVRTC: the constant after '+' is not a 32-bit integer");
		return NVRTC_ERROR_COMPILATION;
	}

	free(prog->ptx);
	if (asprintf(&prog->ptx,
		     "//\n"
		     "// Generated by NVIDIA NVVM Compiler (stand-in NVRTC %d.%d)\n"
		     "//\n"
		     "\n"
		     ".version %d.%d\n"
		     ".target sm_%d\n"
		     ".address_size 64\n"
		     "\n"
		     "\t// .globl\t%s\n"
		     "\n"
		     ".visible .entry %s(\n"
		     "\t.param .u64 %s_param_0,\n"
		     "\t.param .u32 %s_param_1\n"
		     ")\n"
		     "{\n"
		     "\t.reg .b32 \t%%r<3>;\n"
		     "\t.reg .b64 \t%%rd<3>;\n"
		     "\n"
		     "\tld.param.u64 \t%%rd1, [%s_param_0];\n"
		     "\tld.param.u32 \t%%r1, [%s_param_1];\n"
		     "\tcvta.to.global.u64 \t%%rd2, %%rd1;\n"
		     "\tadd.s32 \t%%r2, %%r1, %d;\n"
		     "\tst.global.u32 \t[%%rd2], %%r2;\n"
		     "\tret;\n"
		     "}\n",
		     STANDIN_NVRTC_MAJOR, STANDIN_NVRTC_MINOR, isa / 10, isa % 10, sm, name, name, name, name,
		     name, name, (int32_t)(uint32_t)k) < 0) {
		prog->ptx = NULL;
		return NVRTC_ERROR_OUT_OF_MEMORY;
	}
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size)
{
	log_call("nvrtcGetPTXSize");
	if (prog == NULL || prog->ptx == NULL)
		return NVRTC_ERROR_INVALID_PROGRAM;
	if (size == NULL)
		return NVRTC_ERROR_INVALID_INPUT;
	*size = strlen(prog->ptx) + 1; /* with the terminating NUL, as the real library counts */
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx)
{
	log_call("nvrtcGetPTX");
	if (prog == NULL || prog->ptx == NULL)
		return NVRTC_ERROR_INVALID_PROGRAM;
	if (ptx == NULL)
		return NVRTC_ERROR_INVALID_INPUT;
	memcpy(ptx, prog->ptx, strlen(prog->ptx) + 1);
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *size)
{
	log_call("nvrtcGetProgramLogSize");
	if (prog == NULL)
		return NVRTC_ERROR_INVALID_PROGRAM;
	if (size == NULL)
		return NVRTC_ERROR_INVALID_INPUT;
	*size = strlen(prog->log) + 1;
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log)
{
	log_call("nvrtcGetProgramLog");
	if (prog == NULL)
		return NVRTC_ERROR_INVALID_PROGRAM;
	if (log == NULL)
		return NVRTC_ERROR_INVALID_INPUT;
	memcpy(log, prog->log, strlen(prog->log) + 1);
	return NVRTC_SUCCESS;
}
