# common-headers-nvcc: runtime/common/ stays usable as device code.
#   cmake -DNVCC=... -DSOURCE_DIR=<repo> -DCU=DeviceClean.cu -DOUT=x.o -P ...
# Fails (never skips) without nvcc: every machine of this project has it.

if(NOT EXISTS "${NVCC}")
  message(FATAL_ERROR
    "common-headers-nvcc: nvcc not found at '${NVCC}'. Every machine of this "
    "project has CUDA 13 at /usr/local/cuda; configure with "
    "-DTCC_NVCC=/path/to/nvcc if it lives elsewhere.")
endif()

# DeviceClean.cu must include every header and call every TCC_HOST_DEVICE
# function, or nvcc never checks them as device code.
file(READ "${CU}" cu)
file(GLOB headers "${SOURCE_DIR}/runtime/common/*.h")
set(missing "")
foreach(header ${headers})
  get_filename_component(name "${header}" NAME)
  string(FIND "${cu}" "#include \"runtime/common/${name}\"" at)
  if(at EQUAL -1)
    list(APPEND missing "#include of runtime/common/${name}")
  endif()
  file(READ "${header}" text)
  string(REGEX MATCHALL "TCC_HOST_DEVICE inline [A-Za-z0-9_:]+ [A-Za-z0-9_]+\\("
         decls "${text}")
  foreach(decl ${decls})
    string(REGEX REPLACE ".* ([A-Za-z0-9_]+)\\($" "\\1" fn "${decl}")
    string(REGEX MATCH "[^A-Za-z0-9_]${fn}\\(" called "${cu}")
    if(NOT called)
      list(APPEND missing "a call of ${fn} (${name})")
    endif()
  endforeach()
endforeach()
if(missing)
  list(JOIN missing "\n  " lines)
  message(FATAL_ERROR "common-headers-nvcc: ${CU} lacks\n  ${lines}")
endif()

execute_process(
  COMMAND "${NVCC}" -std=c++17 -arch=sm_90 -Werror all-warnings
          -Xcompiler=-Wall,-Wextra,-Werror -I${SOURCE_DIR} -c "${CU}"
          -o "${OUT}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "common-headers-nvcc: nvcc rejected ${CU} (exit ${rc})")
endif()
