package durable

import "reflect"

func reflectTypeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func reflectValueOf(v any) reflect.Value { return reflect.ValueOf(v) }
