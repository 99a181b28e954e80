# Where `cmake --install` puts commbench, and the .deb CPack makes of it:
#   bin/                         the five commands (bench/CMakeLists.txt), commbench-plot and
#                                commbench-compare (links to the tools below)
#   share/commbench/tools/       plot, compare and the commbench_results package they import
#   share/commbench/slurm/       the job files, the health check and acceptance.txt
#   share/doc/commbench/         README.md and docs/
# The tools find their package beside their real path, so the links in bin/ work from
# anywhere. `cpack -G DEB` in the build folder writes commbench_VERSION_ARCH.deb (prefix /usr).
include(GNUInstallDirs)

set(_commbench_tools ${CMAKE_INSTALL_DATADIR}/commbench/tools)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/plot ${PROJECT_SOURCE_DIR}/scripts/compare
        DESTINATION ${_commbench_tools})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/commbench_results DESTINATION ${_commbench_tools}
        PATTERN __pycache__ EXCLUDE)
foreach(_tool plot compare)
  install(CODE "
    set(_bin \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
    file(MAKE_DIRECTORY \"\${_bin}\")
    file(CREATE_LINK \"../${_commbench_tools}/${_tool}\" \"\${_bin}/commbench-${_tool}\" SYMBOLIC)
    message(STATUS \"Installing: \${_bin}/commbench-${_tool} -> ../${_commbench_tools}/${_tool}\")")
endforeach()

file(GLOB _commbench_job_files ${PROJECT_SOURCE_DIR}/slurm/*.sbatch ${PROJECT_SOURCE_DIR}/slurm/*.sh)
install(PROGRAMS ${_commbench_job_files} DESTINATION ${CMAKE_INSTALL_DATADIR}/commbench/slurm)
install(FILES ${PROJECT_SOURCE_DIR}/slurm/acceptance.txt DESTINATION ${CMAKE_INSTALL_DATADIR}/commbench/slurm)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME commbench)
set(CPACK_PACKAGE_VENDOR commbench)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "NCCL/MPI collective, point-to-point and topology benchmarks with a pre-training cluster check")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "commbench developers <commbench@invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The libraries the commands link (MPI, hwloc, ibverbs, ...) as dpkg-shlibdeps finds them;
# the CUDA runtime is linked statically, the driver comes with the node.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
# A build with the NCCL backend links libnccl.so.2, which NVIDIA's libnccl2 package holds
# (dpkg-shlibdeps does not know a library installed outside dpkg).
if(COMMBENCH_HAVE_NCCL)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libnccl2")
endif()
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-pandas, python3-matplotlib")
include(CPack)
