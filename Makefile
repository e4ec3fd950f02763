# Front door. `make run` sets up and runs the bundled example; `make test`
# builds and passes every test.
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run test conformance fuzz fuzz-smoke bench bench-cpu bench-e2e format clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/xlite opt --print=short examples/mlp.hlo
	$(BUILD)/bin/xlite run --reference_platform=interpreter --iterations=10 examples/mlp.hlo
	$(BUILD)/bin/xlite opt --print=short examples/async_copy.hlo

MLIR_FUZZ = FUZZ_CORPUS=../shared/corpus/stablehlo FUZZ_SEED_NAME='*.mlir' FUZZ_DICT=tests/fuzz/mlir.dict
VHLO_FUZZ = FUZZ_CORPUS=../shared/corpus/vhlo FUZZ_SEED_NAME='*.mlir.bc' FUZZ_DICT=tests/fuzz/vhlo.dict

test: build fuzz-build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	bash tests/fuzz/smoke.sh $(FUZZ_BUILD)/bin/hlo_parser_fuzzer $(FUZZ_SECONDS)
	$(MLIR_FUZZ) bash tests/fuzz/smoke.sh $(FUZZ_BUILD)/bin/mlir_parser_fuzzer $(FUZZ_SECONDS)
	$(VHLO_FUZZ) bash tests/fuzz/smoke.sh $(FUZZ_BUILD)/bin/vhlo_bytecode_fuzzer $(FUZZ_SECONDS)

# The CPU backend over the whole XLA corpus, and command buffers and whole-loop
# kernels against the thunks alone (make test runs every 4th module).
conformance: build
	cd $(BUILD) && XLITE_CONFORMANCE_FULL=1 ctest -R 'cpu_conformance_test|command_buffer_corpus_test' --output-on-failure

# -O1, as libFuzzer's documentation builds fuzz targets: the smoke runs are
# time-bound; -O1 with line tables compiles the sanitized readers ~15% faster
# (CPU time) than -O2 -g and still names file:line in crash reports.
$(FUZZ_BUILD)/build.ninja: CMakeLists.txt
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DXLITE_FUZZ=ON \
	  -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fsanitize=address,undefined"

fuzz-build: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

# Long fuzzing session: make fuzz FUZZ_SECONDS=600
fuzz: fuzz-build
	bash tests/fuzz/smoke.sh $(FUZZ_BUILD)/bin/hlo_parser_fuzzer $(FUZZ_SECONDS)
	$(MLIR_FUZZ) bash tests/fuzz/smoke.sh $(FUZZ_BUILD)/bin/mlir_parser_fuzzer $(FUZZ_SECONDS)
	$(VHLO_FUZZ) bash tests/fuzz/smoke.sh $(FUZZ_BUILD)/bin/vhlo_bytecode_fuzzer $(FUZZ_SECONDS)

bench: build
	$(BUILD)/bin/parse_print_bench
	$(BUILD)/bin/simplify_bench
	$(BUILD)/bin/schedule_bench
	$(BUILD)/bin/kernel_bench
	$(BUILD)/bin/gemm_bench --threads=1
	$(BUILD)/bin/gemm_bench --threads=2
	$(BUILD)/bin/memory_bench
	$(BUILD)/bin/e2e_bench
	$(MAKE) bench-cpu

# The CPU backend against the interpreter and XLA:CPU's figures (scaled by
# this machine's speed, measured before and after by the peers' limits):
# writes $(BENCH_CPU_OUT)/table.md. About 10 minutes on 2 cores.
PEERS ?= ../shared/bench/peers
BENCH_CPU_OUT ?= $(BUILD)/bench-cpu
BENCH_CPU_LIMITS = $(BENCH_CPU_OUT)/limits-before.tsv $(BENCH_CPU_OUT)/limits-after.tsv

bench-cpu: configure
	cmake --build $(BUILD) -j $(JOBS) --target cpu_bench
	mkdir -p $(BENCH_CPU_OUT)
	rm -f $(BENCH_CPU_LIMITS)
	@# build.sh also builds gemm_peers (OpenBLAS); only limits (Eigen) is needed here.
	-bash $(PEERS)/cpp/build.sh $(BUILD)/peers > $(BENCH_CPU_OUT)/peers-build.log 2>&1
	@test -x $(BUILD)/peers/limits || echo "bench-cpu: $(BUILD)/peers/limits did not build" \
	  "(needs libeigen3-dev; see $(BENCH_CPU_OUT)/peers-build.log): XLA's figures stay unscaled"
	-test -x $(BUILD)/peers/limits && $(BUILD)/peers/limits --threads 2 > $(BENCH_CPU_OUT)/limits-before.tsv
	$(BUILD)/bin/cpu_bench | tee $(BENCH_CPU_OUT)/cpu_bench.txt
	-test -x $(BUILD)/peers/limits && $(BUILD)/peers/limits --threads 2 > $(BENCH_CPU_OUT)/limits-after.tsv
	/usr/bin/python3 bench/cpu_table.py --bench $(BENCH_CPU_OUT)/cpu_bench.txt \
	  --limits $$(for f in $(BENCH_CPU_LIMITS); do test -s $$f && echo $$f; done) \
	  | tee $(BENCH_CPU_OUT)/table.md

# xlite and the peers (numpy, torch, oneDNN, OpenBLAS, Eigen, ONNX Runtime) on
# the peers' workloads in one run: the peers' run_all.sh with e2e_bench as its
# PROJECT_CMD, ROUNDS rounds, 1 and 2 threads. The peers' folder is copied to
# $(PEERS_RUN) (it writes node_modules, models, results there); its setup.sh
# installs what they need (root; python3-torch is large). Tables:
# $(PEERS_RUN)/results/<stamp>/summary_pivot.md. About 2.5 minutes a round.
PEERS_RUN ?= $(BUILD)/peers-run
ROUNDS ?= 3
bench-e2e: configure
	cmake --build $(BUILD) -j $(JOBS) --target e2e_bench
	test -d $(PEERS_RUN) || cp -r $(PEERS) $(PEERS_RUN)
	bash $(PEERS_RUN)/setup.sh
	PROJECT_CMD="cd $(CURDIR) && $(BUILD)/bin/e2e_bench --threads=1 && $(BUILD)/bin/e2e_bench --threads=2" \
	  ROUNDS=$(ROUNDS) bash $(PEERS_RUN)/run_all.sh

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
