# Links one harness binary per generated source (used by build.sh, which sets every variable):
#   CC       numfuzz-cc           SRC  generated harness sources   OUT  output directory
#   LIBS     GSL archives/flags   INCLUDE  GSL headers            KEY  toolchain key file
#   SUFFIX   appended to the binary's name (`.taint` for the taint builds)
#   PRIVATE  specfunc's private headers (the internal functions' harnesses include them)
#   EXTRA    more sources and flags for every link (the AFL++ baseline's driver)
# A binary is rebuilt when its source, a GSL archive, the toolchain key or this file changes.
LIBDEPS := $(filter %.a,$(LIBS))

# lld links the ~100 MB numfuzz runtime faster than ld.bfd, and compressing the debug
# sections (mostly the runtime's) shrinks each binary from ~36 MB to ~17 MB.
LDFLAGS_FAST := $(shell command -v ld.lld-19 >/dev/null 2>&1 || command -v ld.lld >/dev/null 2>&1 && echo -fuse-ld=lld -Wl,--compress-debug-sections=zlib)

$(OUT)/%$(SUFFIX): $(SRC)/%.c $(LIBDEPS) $(KEY) $(lastword $(MAKEFILE_LIST))
	$(CC) -O2 -I$(INCLUDE) -I$(PRIVATE) $< $(EXTRA) $(LIBS) -lm $(LDFLAGS_FAST) -o $@.tmp && mv $@.tmp $@
