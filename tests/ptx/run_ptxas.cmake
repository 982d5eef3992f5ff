# One PTX validation test: ptxas -arch=sm_ARCH PTX. Today's ptxas (CUDA 13) no longer knows
# sm_70/sm_72, so those targets are compiled with CUDA 12's ptxas (PTXAS_CUDA12, else the one the
# nvidia-cuda-nvcc-cu12 wheel installs, found at test time so that `make test` finds the wheel its
# install-deps step just installed). Never skipped: a missing ptxas fails the test with advice.
set(install_advice "run scripts/install-deps --test (it pip-installs nvidia-cuda-nvcc-cu12) or configure with -DGPUVET_PTXAS_CUDA12=/path/to/ptxas")
if(NOT PTXAS OR PTXAS MATCHES "NOTFOUND$")
  message(FATAL_ERROR
    "ptxas not found, so the PTX kernels cannot be validated. Install the CUDA toolkit "
    "(it puts ptxas in /usr/local/cuda/bin) or configure with -DGPUVET_PTXAS=/path/to/ptxas.")
endif()

function(ptxas_version exe out)
  execute_process(COMMAND ${exe} --version OUTPUT_VARIABLE text ERROR_QUIET)
  string(REGEX MATCH "release [0-9.]+, V[0-9.]+" v "${text}")
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Returns in rc_var 0 on success, "unknown-arch" when this ptxas does not know sm_ARCH at all.
function(try_ptxas exe rc_var log_var)
  execute_process(COMMAND ${exe} -arch=sm_${ARCH} ${PTX} -o /dev/null
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 AND err MATCHES "is not defined for option 'gpu-name'")
    set(rc unknown-arch)
  endif()
  set(${rc_var} "${rc}" PARENT_SCOPE)
  set(${log_var} "${out}${err}" PARENT_SCOPE)
endfunction()

set(exe ${PTXAS})
try_ptxas(${exe} rc log)
if(rc STREQUAL "unknown-arch")
  ptxas_version(${PTXAS} newer)
  if(NOT PTXAS_CUDA12 OR PTXAS_CUDA12 MATCHES "NOTFOUND$")
    set(PTXAS_CUDA12 "")
    if(PYTHON)
      execute_process(
        COMMAND ${PYTHON} -c "import glob, nvidia; hits = sorted(h for p in nvidia.__path__ for h in glob.glob(p + '/cuda_nvcc/bin/ptxas')); print(hits[-1] if hits else '')"
        OUTPUT_VARIABLE PTXAS_CUDA12 OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  if(NOT PTXAS_CUDA12 OR NOT EXISTS "${PTXAS_CUDA12}")
    message(FATAL_ERROR "ptxas ${newer} no longer supports sm_${ARCH} and CUDA 12's ptxas was not found, "
                        "so ${PTX} cannot be validated for sm_${ARCH}: ${install_advice}.")
  endif()
  set(exe ${PTXAS_CUDA12})
  try_ptxas(${exe} rc log)
  if(rc STREQUAL "unknown-arch")
    ptxas_version(${exe} v)
    message(FATAL_ERROR "${exe} (ptxas ${v}) does not support sm_${ARCH} either: it must be CUDA 12's; ${install_advice}.")
  endif()
endif()
ptxas_version(${exe} version)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ptxas ${version} (${exe}) rejected ${PTX} for sm_${ARCH}:\n${log}")
endif()
message(STATUS "validated ${PTX} for sm_${ARCH} with ptxas ${version} (${exe})")
