/*
 * flash_d192.cu - the FAST flash kernel's instances for head sizes up to 192
 * (the OPP__FLASH_D192_KERNELS lines of kernels/kernel_list.h): one
 * translation unit per bucket keeps each nvcc process small.
 * Build: nvcc_object(//kernels:fast). Resource report:
 *   nvcc -c -gencode=arch=compute_80,code=sm_80 -std=c++17 -O3 -Xptxas -v \
 *        -I. -I/usr/local/cuda/include kernels/flash_d192.cu
 */
#include "kernels/flash_launch.cuh"

OPP__FLASH_D192_KERNELS(OPP__FLASH_LAUNCHER)
