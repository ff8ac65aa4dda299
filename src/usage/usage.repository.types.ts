/** Types generated for queries found in "src/usage/usage.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type NumberOrStringArray = (NumberOrString)[];

export type numberArray = (number)[];

export type stringArray = (string)[];

/** 'MeteredSubscriptions' parameters type */
export interface IMeteredSubscriptionsParams {
  customerIds: stringArray;
  ids: stringArray;
  merchantId: string;
}

/** 'MeteredSubscriptions' return type */
export interface IMeteredSubscriptionsResult {
  amount: string;
  current_period_end: string;
  customer_id: string;
  id: string;
  interval_seconds: number;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  periods_charged: number;
  status: string;
  usage_grace_seconds: number;
}

/** 'MeteredSubscriptions' query type */
export interface IMeteredSubscriptionsQuery {
  params: IMeteredSubscriptionsParams;
  result: IMeteredSubscriptionsResult;
}

/** 'ExistingEvents' parameters type */
export interface IExistingEventsParams {
  eventIds: stringArray;
  merchantId: string;
}

/** 'ExistingEvents' return type */
export interface IExistingEventsResult {
  event_id: string;
}

/** 'ExistingEvents' query type */
export interface IExistingEventsQuery {
  params: IExistingEventsParams;
  result: IExistingEventsResult;
}

/** 'OpenPeriods' parameters type */
export interface IOpenPeriodsParams {
  at: Date | string;
  merchantId: string;
  periods: numberArray;
  subscriptionIds: stringArray;
}

/** 'OpenPeriods' return type */
export type IOpenPeriodsResult = void;

/** 'OpenPeriods' query type */
export interface IOpenPeriodsQuery {
  params: IOpenPeriodsParams;
  result: IOpenPeriodsResult;
}

/** 'LockPeriods' parameters type */
export interface ILockPeriodsParams {
  periods: numberArray;
  subscriptionIds: stringArray;
}

/** 'LockPeriods' return type */
export interface ILockPeriodsResult {
  closed: boolean;
  period: number;
  subscription_id: string;
}

/** 'LockPeriods' query type */
export interface ILockPeriodsQuery {
  params: ILockPeriodsParams;
  result: ILockPeriodsResult;
}

/** 'InsertEvents' parameters type */
export interface IInsertEventsParams {
  at: Date | string;
  eventIds: stringArray;
  merchantId: string;
  meters: stringArray;
  occurredAt: stringArray;
  periods: numberArray;
  quantities: NumberOrStringArray;
  subscriptionIds: stringArray;
}

/** 'InsertEvents' return type */
export interface IInsertEventsResult {
  event_id: string;
}

/** 'InsertEvents' query type */
export interface IInsertEventsQuery {
  params: IInsertEventsParams;
  result: IInsertEventsResult;
}

/** 'ClosePeriod' parameters type */
export interface IClosePeriodParams {
  at: Date | string;
  merchantId: string;
  period: number;
  subscriptionId: string;
}

/** 'ClosePeriod' return type */
export interface IClosePeriodResult {
  charged_amount: string | null;
}

/** 'ClosePeriod' query type */
export interface IClosePeriodQuery {
  params: IClosePeriodParams;
  result: IClosePeriodResult;
}

/** 'PeriodTotal' parameters type */
export interface IPeriodTotalParams {
  period: number;
  subscriptionId: string;
}

/** 'PeriodTotal' return type */
export interface IPeriodTotalResult {
  events: number;
  units: string;
}

/** 'PeriodTotal' query type */
export interface IPeriodTotalQuery {
  params: IPeriodTotalParams;
  result: IPeriodTotalResult;
}

/** 'FreezePeriod' parameters type */
export interface IFreezePeriodParams {
  at: Date | string;
  breakdown: Json;
  chargedAmount: NumberOrString;
  period: number;
  subscriptionId: string;
  units: NumberOrString;
  usageAmount: NumberOrString;
}

/** 'FreezePeriod' return type */
export interface IFreezePeriodResult {
  subscription_id: string;
}

/** 'FreezePeriod' query type */
export interface IFreezePeriodQuery {
  params: IFreezePeriodParams;
  result: IFreezePeriodResult;
}

/** 'Breakdowns' parameters type */
export interface IBreakdownsParams {
  periods: numberArray;
  subscriptionIds: stringArray;
}

/** 'Breakdowns' return type */
export interface IBreakdownsResult {
  breakdown: Json | null;
  period: number;
  subscription_id: string;
}

/** 'Breakdowns' query type */
export interface IBreakdownsQuery {
  params: IBreakdownsParams;
  result: IBreakdownsResult;
}

/** 'EventsOfPeriod' parameters type */
export interface IEventsOfPeriodParams {
  period: number;
  subscriptionId: string;
}

/** 'EventsOfPeriod' return type */
export interface IEventsOfPeriodResult {
  breakdown: Json | null;
  closed_at: string | null;
}

/** 'EventsOfPeriod' query type */
export interface IEventsOfPeriodQuery {
  params: IEventsOfPeriodParams;
  result: IEventsOfPeriodResult;
}

