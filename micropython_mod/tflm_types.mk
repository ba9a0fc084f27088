# TFLM_TYPES as compiler flags, for make builds (micropython.mk and the
# project's compile check): each entry OP:type,type builds that op's kernel
# for those tensor types only (-DTFLM_TYPES_OP=0+TFLM_T_TYPE+...), bare
# types are the list of every op without an entry of its own (-DTFLM_TYPES).
# `tflm-host ops MODEL...` prints a model's setting; tflm_config.h says more.
tflm_types_comma := ,
tflm_types_empty :=
tflm_types_space := $(tflm_types_empty) $(tflm_types_empty)
# "INT32 INT8" -> 0+TFLM_T_INT32+TFLM_T_INT8
tflm_types_sum = 0$(subst $(tflm_types_space),,$(foreach t,$(1),+TFLM_T_$(t)))
# CONV_2D:INT32,INT8 -> -DTFLM_TYPES_CONV_2D=0+TFLM_T_INT32+TFLM_T_INT8
tflm_types_op = -DTFLM_TYPES_$(word 1,$(subst :, ,$(1)))=$(call tflm_types_sum,$(subst $(tflm_types_comma), ,$(word 2,$(subst :, ,$(1)))))
tflm_types_bare = $(strip $(foreach w,$(1),$(if $(findstring :,$(w)),,$(w))))
tflm_types_upper = $(foreach w,$(1),$(if $(findstring :,$(w)),$(call tflm_types_op,$(w)))) \
	$(if $(call tflm_types_bare,$(1)),-DTFLM_TYPES=$(call tflm_types_sum,$(call tflm_types_bare,$(1))))
tflm_types_cflags = $(strip $(if $(strip $(1)),$(call tflm_types_upper,$(shell echo '$(strip $(1))' | tr a-z A-Z))))
