# One PTX validation test: ptxas -arch=sm_ARCH PTX. Fails with advice when ptxas is missing;
# reports itself skipped only when this ptxas no longer knows the architecture at all.
if(NOT PTXAS OR PTXAS MATCHES "NOTFOUND$")
  message(FATAL_ERROR
    "ptxas not found, so the PTX kernels cannot be validated. Install the CUDA toolkit "
    "(it puts ptxas in /usr/local/cuda/bin) or configure with -DGPUVET_PTXAS=/path/to/ptxas.")
endif()
execute_process(COMMAND ${PTXAS} --version OUTPUT_VARIABLE version_text)
string(REGEX MATCH "release [0-9.]+, V[0-9.]+" version "${version_text}")
execute_process(
  COMMAND ${PTXAS} -arch=sm_${ARCH} ${PTX} -o /dev/null
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(STATUS "validated ${PTX} for sm_${ARCH} with ptxas ${version}")
  return()
endif()
if(err MATCHES "is not defined for option 'gpu-name'")
  message(STATUS "NOT VALIDATED: ptxas ${version} no longer supports sm_${ARCH}; "
                 "${PTX} stays at its .target for older drivers but was not compiled for sm_${ARCH} here")
  return()  # the test's SKIP_REGULAR_EXPRESSION turns this line into a skipped test
endif()
message(FATAL_ERROR "ptxas ${version} rejected ${PTX} for sm_${ARCH}:\n${out}${err}")
