# Warnings are errors in gpuvet's own sources: the project's targets all get -Wall -Wextra -Werror.
# Third-party headers stay quiet because they come in as SYSTEM includes (imported targets, or
# target_include_directories(SYSTEM ...) for NVIDIA's headers in the tests).
# GPUVET_WERROR=OFF keeps the warnings but lets a newer compiler's new ones through (packagers).
option(GPUVET_WERROR "Treat compiler warnings in gpuvet's own sources as errors" ON)
add_compile_options(-Wall -Wextra)
if(GPUVET_WERROR)
  add_compile_options(-Werror)
endif()
